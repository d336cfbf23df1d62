<#
.SYNOPSIS
  The driver-contract sequences of test/conformance/drivers/ (AWS EBS,
  Azure Disk, GCE PD; docs/reference/DRIVER-CONTRACTS.md section 1, section 3, section 4, facts of
  section 9) replayed through csi-proxy-cli.exe against the real csi-proxy.exe on a
  Windows node, with throw-away VHDX disks (diskpart, through common.ps1: no Hyper-V
  PowerShell needed).

  STATUS: WRITTEN, READY TO RUN, NOT RUN by the team (our CI is Linux + Wine;
  Wine has no disks, mount points or volume arrival). Record the result in the
  README's verification table when it has been run.

  A VHDX has no EBS serial, GCE Page83 or Azure LUN of its own, so each driver's
  matching rule (fact 18, 19) is applied to the identity Windows reports for the
  VHDX (Get-Disk SerialNumber / ListDiskIDs page83 / Location); everything after
  the match is the driver's exact sequence with its paths: EBS's lower-case
  c:\ paths, Azure Disk's raw C:\ paths, GCE's raw paths.

.EXAMPLE
  .\drivers.ps1 -Cli C:\csi\csi-proxy-cli.exe
#>
param(
    [Parameter(Mandatory = $true)] [string] $Cli,
    [string] $WorkDir = "$env:TEMP\csi-proxy-drivers",
    [string] $Kubelet = 'C:\var\lib\kubelet',
    [switch] $Keep
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

# --- calling the service (as staging.ps1: the request goes through a file) ---------
$reqFile = Join-Path $env:TEMP 'csi-proxy-drivers-rpc.json'
function Rpc([string] $Group, [string] $Method, $Body = $null, [string] $Version = 'v1') {
    $a = @($Group, $Version, $Method)
    if ($null -ne $Body) {
        [IO.File]::WriteAllText($reqFile, ($Body | ConvertTo-Json -Compress -Depth 6))
        $a += "@$reqFile"
    }
    $r = Invoke-Native $Cli $a
    $out = $r.Out
    $code = $r.Code
    $line = $out | Where-Object { $_.StartsWith('{') } | Select-Object -First 1
    $json = $null
    if ($line) { $json = $line | ConvertFrom-Json }
    [pscustomobject]@{ Code = $code; Out = ($out -join ' | '); Json = $json }
}
function Prop($obj, [string] $name) {
    if ($null -eq $obj) { return $null }
    $p = $obj.PSObject.Properties[$name]
    if ($p) { $p.Value } else { $null }
}
# A driver step: an error is the driver's failure (named), unless -Tolerate.
function Step([string] $driver, [string] $label, $r) {
    Check ($r.Code -eq 0) "${driver}: $label" $r.Out
    $r
}
$EbsRegex = '(Get-Item -Path \S+).Target, output: , error: <nil>|because it does not exist'
function Norm([string] $p) { $p = $p.Replace('/', '\'); if ($p.StartsWith('\')) { "c:$p" } else { $p } }
function StagePath([string] $plugin, [string] $h, [string] $root = $Kubelet) { "$root\plugins\kubernetes.io\csi\$plugin\$h\globalmount" }
function PodPath([string] $uid, [string] $pv, [string] $root = $Kubelet) { "$root\pods\$uid\volumes\kubernetes.io~csi\$pv\mount" }

# --- disks -------------------------------------------------------------------------
New-Item -ItemType Directory -Force -Path $WorkDir | Out-Null
function New-TestDisk([string] $name, [uint64] $size) { New-TestVhd (Join-Path $WorkDir "$name.vhdx") ([int] ($size / 1MB)) }
function Grow-TestDisk($disk, [uint64] $size) { $disk.Number = Resize-TestVhd $disk.File ([int] ($size / 1MB)) }
$disks = @()

try {
    $ebsDisk = New-TestDisk 'ebs' 2GB; $disks += $ebsDisk
    $azDisk = New-TestDisk 'azure' 2GB; $disks += $azDisk
    $gceDisk = New-TestDisk 'gce' 2GB; $disks += $gceDisk
    Start-Sleep -Seconds 2

    # ============================== EBS (section 1) ==============================
    Claim 'DRIVER-CONTRACTS section 1 (AWS EBS) and section 9 facts 3-5, 8, 13, 16, 18, 21: the driver''s stage/publish/unstage sequence'
    $n = $ebsDisk.Number
    $stg = Norm (StagePath 'ebs.csi.aws.com' 'vhd-ebs') -replace '^C:', 'c:'   # fact 8: lower-case c:
    $pub = (Norm (PodPath 'pod-ebs' 'pv-ebs')) -replace '^C:', 'c:'
    New-Item -ItemType Directory -Force -Path (Split-Path $pub) | Out-Null
    function Ebs-FindDevicePath([int] $want) { # fact 18: SerialNumber contains the id (here: the VHDX's own serial)
        $ids = (Step EBS 'ListDiskIDs' (Rpc disk ListDiskIDs)).Json.diskIDs
        $serial = "$((Get-Disk -Number $want).SerialNumber)".Trim()
        foreach ($p in $ids.PSObject.Properties) { if ($serial -and "$(Prop $p.Value 'serial_number')".Contains($serial)) { return [int] $p.Name } }
        return -1
    }
    function Ebs-DeviceFromMount([string] $path) { # (number or -1 = not mounted), fact 3-5
        $r = Rpc volume GetVolumeIDFromTargetPath @{ target_path = $path }
        if ($r.Code -ne 0) {
            Check ($r.Out -match $EbsRegex) "EBS: GetVolumeIDFromTargetPath($path) error matches the regex" $r.Out
            return -1
        }
        $d = Step EBS 'GetDiskNumberFromVolumeID' (Rpc volume GetDiskNumberFromVolumeID @{ volume_id = $r.Json.volume_id })
        [int] (Prop $d.Json 'disk_number')
    }
    function Ebs-Stage {
        $k = Ebs-FindDevicePath $n
        Check ($k -eq $n) "EBS: FindDevicePath finds disk $n" "got $k"
        if (-not (Rpc filesystem PathExists @{ path = $stg }).Json.exists) { Step EBS 'Mkdir' (Rpc filesystem Mkdir @{ path = $stg }) | Out-Null }
        if ((Ebs-DeviceFromMount $stg) -eq $n) { return 'already staged' } # fact 17
        Step EBS 'PartitionDisk' (Rpc disk PartitionDisk @{ disk_number = $n }) | Out-Null      # fact 12
        Step EBS 'SetDiskState online' (Rpc disk SetDiskState @{ disk_number = $n; is_online = $true }) | Out-Null # fact 13
        $vols = @((Step EBS 'ListVolumesOnDisk' (Rpc volume ListVolumesOnDisk @{ disk_number = $n })).Json.volume_ids)
        Check ($vols.Count -ge 1) 'EBS: VolumeIds[0] exists (fact 14)' "got $($vols.Count)"
        $v = $vols[0]
        if (-not (Prop (Rpc volume IsVolumeFormatted @{ volume_id = $v }).Json 'formatted')) { Step EBS 'FormatVolume' (Rpc volume FormatVolume @{ volume_id = $v }) | Out-Null }
        Step EBS 'MountVolume' (Rpc volume MountVolume @{ volume_id = $v; target_path = $stg }) | Out-Null
        Rpc disk Rescan | Out-Null
        $disk = [int64] (Step EBS 'GetDiskStats' (Rpc disk GetDiskStats @{ disk_number = $n })).Json.total_bytes
        $vid = (Step EBS 'GetVolumeIDFromTargetPath(stg)' (Rpc volume GetVolumeIDFromTargetPath @{ target_path = $stg })).Json.volume_id
        Check ($vid -ceq $v) 'EBS: one volume id form (fact 15)' "$vid vs $v"
        $fs = [int64] (Step EBS 'GetVolumeStats' (Rpc volume GetVolumeStats @{ volume_id = $vid })).Json.total_bytes
        if ($disk -le $fs + 4096) { Step EBS 'ResizeVolume(0)' (Rpc volume ResizeVolume @{ volume_id = $vid; size_bytes = 0 }) | Out-Null } # fact 21
        'staged'
    }
    function Ebs-Unstage {
        $k = Ebs-DeviceFromMount $stg
        if ($k -lt 0) { return 'not staged' }
        $vid = (Step EBS 'GetVolumeIDFromTargetPath' (Rpc volume GetVolumeIDFromTargetPath @{ target_path = $stg })).Json.volume_id
        Step EBS 'UnmountVolume' (Rpc volume UnmountVolume @{ volume_id = $vid; target_path = $stg }) | Out-Null
        Step EBS 'Rmdir(force)' (Rpc filesystem Rmdir @{ path = $stg; force = $true }) | Out-Null
        $d = Step EBS 'GetDiskNumberFromVolumeID after the mount point is gone (fact 16)' (Rpc volume GetDiskNumberFromVolumeID @{ volume_id = $vid })
        Step EBS 'SetDiskState offline' (Rpc disk SetDiskState @{ disk_number = [int] (Prop $d.Json 'disk_number'); is_online = $false }) | Out-Null
        'unstaged'
    }
    Check ((Ebs-Stage) -eq 'staged') 'EBS NodeStageVolume'
    Check ((Ebs-Stage) -eq 'already staged') 'EBS NodeStageVolume retry: already staged'
    if ((Rpc filesystem PathExists @{ path = $pub }).Json.exists) { Step EBS 'Rmdir(pub)' (Rpc filesystem Rmdir @{ path = $pub; force = $true }) | Out-Null }
    Step EBS 'CreateSymlink(stg -> pub)' (Rpc filesystem CreateSymlink @{ source_path = $stg; target_path = $pub }) | Out-Null
    Check (((Get-Item $pub).LinkType) -eq 'SymbolicLink') 'EBS: the link is at TargetPath (fact 9)'
    Grow-TestDisk $ebsDisk 3GB   # detached, expanded, attached again: the number may change
    $n = $ebsDisk.Number
    if ((Get-Disk -Number $n).IsOffline) { Set-Disk -Number $n -IsOffline $false }
    $before = (Get-Partition -DiskNumber $n | Where-Object Type -eq 'Basic').Size
    Check ((Ebs-DeviceFromMount $pub) -eq $n) 'EBS NodeExpandVolume: the pod symlink resolves to the staged volume (fact 6)'
    Rpc disk Rescan | Out-Null
    $vid = (Step EBS 'GetVolumeIDFromTargetPath(pub)' (Rpc volume GetVolumeIDFromTargetPath @{ target_path = $pub })).Json.volume_id
    Step EBS 'ResizeVolume(0)' (Rpc volume ResizeVolume @{ volume_id = $vid; size_bytes = 0 }) | Out-Null
    Check ((Get-Partition -DiskNumber $n | Where-Object Type -eq 'Basic').Size -gt $before) 'EBS: the partition grew'
    Step EBS 'Rmdir(pub) unpublish' (Rpc filesystem Rmdir @{ path = $pub; force = $true }) | Out-Null
    Step EBS 'Rmdir(pub) unpublish retry (fact 11a)' (Rpc filesystem Rmdir @{ path = $pub; force = $true }) | Out-Null
    Check ((Ebs-Unstage) -eq 'unstaged') 'EBS NodeUnstageVolume'
    Check ((Ebs-Unstage) -eq 'not staged') 'EBS NodeUnstageVolume retry after the directory is gone (fact 5)'
    Check ((Ebs-Stage) -eq 'staged') 'EBS re-stage of the offline disk: PartitionDisk no-op offline (fact 12), volume listed (fact 14)'
    Check ((Ebs-Unstage) -eq 'unstaged') 'EBS NodeUnstageVolume again'

    # ============================ Azure Disk (section 3) ============================
    Claim 'DRIVER-CONTRACTS section 3 (Azure Disk) and section 9 facts 19, 25: raw C:\ paths, the decimal-disk-number VolumeId of ResizeVolume'
    $n = $azDisk.Number
    $stg = StagePath 'disk.csi.azure.com' 'vhd-az'   # raw C:\ paths
    $pub = PodPath 'pod-az' 'pv-az'
    New-Item -ItemType Directory -Force -Path $stg, (Split-Path $pub) | Out-Null  # kubelet's
    Rpc disk Rescan | Out-Null
    $locs = (Step AzureDisk 'ListDiskLocations' (Rpc disk ListDiskLocations)).Json.disk_locations
    $lun = "$(Prop (Prop $locs "$n") 'LUNID')"
    Check ($lun -match '^(0|[1-9][0-9]*)$') "AzureDisk: LUNID '$lun' is a plain decimal (fact 19)"
    $ns = Norm $stg
    if ((Rpc filesystem PathExists @{ path = $ns }).Json.exists -and (Prop (Rpc filesystem IsSymlink @{ path = $ns }).Json 'is_symlink')) { Bad 'AzureDisk: fresh staging dir is not staged' '' }
    Step AzureDisk 'PartitionDisk' (Rpc disk PartitionDisk @{ disk_number = $n }) | Out-Null
    $vols = @((Step AzureDisk 'ListVolumesOnDisk' (Rpc volume ListVolumesOnDisk @{ disk_number = $n })).Json.volume_ids)
    Check ($vols.Count -ge 1) 'AzureDisk: VolumeIds[0] exists (fact 14)'
    $v = $vols[0]
    if (-not (Prop (Rpc volume IsVolumeFormatted @{ volume_id = $v }).Json 'formatted')) { Step AzureDisk 'FormatVolume' (Rpc volume FormatVolume @{ volume_id = $v }) | Out-Null }
    Step AzureDisk 'MountVolume on the existing empty dir (fact 20)' (Rpc volume MountVolume @{ volume_id = $v; target_path = $ns }) | Out-Null
    Step AzureDisk 'ResizeVolume(VolumeId = disk number) (fact 25)' (Rpc volume ResizeVolume @{ volume_id = "$n"; size_bytes = 0 }) | Out-Null
    Check ([bool] (Prop (Step AzureDisk 'IsSymlink(mount folder)' (Rpc filesystem IsSymlink @{ path = $ns })).Json 'is_symlink')) 'AzureDisk: IsSymlink true on the mount folder (fact 10)'
    Step AzureDisk 'MountVolume again (fact 20)' (Rpc volume MountVolume @{ volume_id = $v; target_path = $ns }) | Out-Null
    Step AzureDisk 'CreateSymlink' (Rpc filesystem CreateSymlink @{ source_path = $ns; target_path = (Norm $pub) }) | Out-Null
    $vid = (Step AzureDisk 'stats: GetVolumeIDFromTargetPath(raw pod symlink) (facts 6, 7)' (Rpc volume GetVolumeIDFromTargetPath @{ target_path = $pub })).Json.volume_id
    Check ($vid -ceq $v) 'AzureDisk: the pod symlink resolves to the staged volume'
    $st = (Step AzureDisk 'GetVolumeStats' (Rpc volume GetVolumeStats @{ volume_id = $vid })).Json
    Check ([int64] $st.total_bytes -gt 0) 'AzureDisk: TotalBytes (fact 23)'
    Step AzureDisk 'ResizeVolume(0) at maximum: no-op (fact 21)' (Rpc volume ResizeVolume @{ volume_id = $vid; size_bytes = 0 }) | Out-Null
    Step AzureDisk 'unpublish Rmdir' (Rpc filesystem Rmdir @{ path = (Norm $pub); force = $true }) | Out-Null
    Check (Test-Path $ns) 'AzureDisk: removing the pod link left the staging folder'
    Rpc volume WriteVolumeCache @{ volume_id = $v } | Out-Null
    Step AzureDisk 'unstage Rmdir(force) of the mount folder (fact 11c)' (Rpc filesystem Rmdir @{ path = $ns; force = $true }) | Out-Null
    Check (@(Get-Partition -DiskNumber $n | Get-Volume | Where-Object { $_.FileSystem -eq 'NTFS' }).Count -eq 1) 'AzureDisk: the volume survived the Rmdir'
    Check (-not (Test-Path $ns)) 'AzureDisk: the mount folder is gone'
    Step AzureDisk 'unstage retry: Rmdir(force) of a missing path (fact 11a)' (Rpc filesystem Rmdir @{ path = $ns; force = $true }) | Out-Null

    # ============================== GCE PD (section 4) ==============================
    Claim 'DRIVER-CONTRACTS section 4 (GCE PD) and section 9 facts 6, 7, 10, 13, 16, 21: raw drive-less paths, the pod symlink resolves to the staged volume'
    $n = $gceDisk.Number
    $root = $Kubelet.Substring(2) # the GCE manifest's drive-less kubelet root (fact 7)
    $stg = StagePath 'pd.csi.storage.gke.io' 'vhd-gce' $root
    $pub = PodPath 'pod-gce' 'pv-gce' $root
    New-Item -ItemType Directory -Force -Path (Norm $stg) | Out-Null
    $r = Rpc filesystem IsSymlink @{ path = $stg }
    Check (($r.Code -ne 0) -or -not (Prop $r.Json 'is_symlink')) 'GCE: fresh staging dir not staged'
    foreach ($p in (Step GCE 'ListDiskIDs' (Rpc disk ListDiskIDs)).Json.diskIDs.PSObject.Properties) {
        Check ($null -ne (Rpc disk GetDiskStats @{ disk_number = [int] $p.Name }).Json) "GCE: GetDiskStats($($p.Name)) answers (fact 22)"
    }
    Step GCE 'PartitionDisk' (Rpc disk PartitionDisk @{ disk_number = $n }) | Out-Null
    Step GCE 'SetDiskState online (already online: fact 13)' (Rpc disk SetDiskState @{ disk_number = $n; is_online = $true }) | Out-Null
    $vols = @((Step GCE 'ListVolumesOnDisk' (Rpc volume ListVolumesOnDisk @{ disk_number = $n })).Json.volume_ids)
    $v = $vols[0]
    if (-not (Prop (Rpc volume IsVolumeFormatted @{ volume_id = $v }).Json 'formatted')) { Step GCE 'FormatVolume' (Rpc volume FormatVolume @{ volume_id = $v }) | Out-Null }
    Step GCE 'MountVolume(raw drive-less path)' (Rpc volume MountVolume @{ volume_id = $v; target_path = $stg }) | Out-Null
    $vid = (Step GCE 'GetVolumeIDFromTargetPath(raw)' (Rpc volume GetVolumeIDFromTargetPath @{ target_path = $stg })).Json.volume_id
    Step GCE 'ResizeVolume(0) (fact 21)' (Rpc volume ResizeVolume @{ volume_id = $vid; size_bytes = 0 }) | Out-Null
    Check ([bool] (Prop (Rpc filesystem IsSymlink @{ path = $stg }).Json 'is_symlink')) 'GCE re-stage: IsSymlink(raw) true (fact 10)'
    New-Item -ItemType Directory -Force -Path (Split-Path (Norm $pub)) | Out-Null
    Step GCE 'CreateSymlink' (Rpc filesystem CreateSymlink @{ source_path = (Norm $stg); target_path = (Norm $pub) }) | Out-Null
    $vid2 = (Step GCE 'stats: GetVolumeIDFromTargetPath(raw pod symlink) (fact 6)' (Rpc volume GetVolumeIDFromTargetPath @{ target_path = $pub })).Json.volume_id
    Check ($vid2 -ceq $v) 'GCE: the pod symlink resolves to the staged volume'
    Step GCE 'GetVolumeStats' (Rpc volume GetVolumeStats @{ volume_id = $vid2 }) | Out-Null
    Step GCE 'unpublish Rmdir' (Rpc filesystem Rmdir @{ path = (Norm $pub); force = $true }) | Out-Null
    $ns = Norm $stg
    $vid = (Step GCE 'unstage GetVolumeIDFromTargetPath' (Rpc volume GetVolumeIDFromTargetPath @{ target_path = $ns })).Json.volume_id
    Step GCE 'UnmountVolume' (Rpc volume UnmountVolume @{ volume_id = $vid; target_path = $ns }) | Out-Null
    Step GCE 'Rmdir(force)' (Rpc filesystem Rmdir @{ path = $ns; force = $true }) | Out-Null
    $d = Step GCE 'GetDiskNumberFromVolumeID after unmount (fact 16)' (Rpc volume GetDiskNumberFromVolumeID @{ volume_id = $vid })
    Step GCE 'SetDiskState offline' (Rpc disk SetDiskState @{ disk_number = $n; is_online = $false }) | Out-Null
    Step GCE 'SetDiskState offline again (fact 13)' (Rpc disk SetDiskState @{ disk_number = $n; is_online = $false }) | Out-Null
    Check (-not (Rpc filesystem PathExists @{ path = $ns }).Json.exists) 'GCE unstage retry: PathExists false -> success'

    # ================== NVMe namespaces in ListDiskLocations ==================
    # docs/reference/disk-locations.md: an NVMe namespace whose ID Windows
    # reports answers LUN = NSID - 1, and no two disks answer one (Adapter,
    # Target, LUN). What Windows reports for each namespace (IOCTL_SCSI_GET_ADDRESS
    # through Win32_DiskDrive, MSFT_Disk Location and Path) is printed, to settle
    # on a node what Microsoft's pages leave open.
    Claim 'ListDiskLocations: no two disks share (Adapter, Target, LUN); NVMe namespaces answer NSID - 1 (docs/reference/disk-locations.md)'
    $locs = (Step AzureDisk 'ListDiskLocations (NVMe rule)' (Rpc disk ListDiskLocations)).Json.disk_locations
    $places = @{}
    $dup = @()
    foreach ($p in $locs.PSObject.Properties) {
        $key = "$($p.Value.Adapter)/$($p.Value.Target)/$($p.Value.LUNID)"
        if ($places.ContainsKey($key)) { $dup += "disks $($places[$key]) and $($p.Name) at $key" } else { $places[$key] = $p.Name }
    }
    Check ($dup.Count -eq 0) 'ListDiskLocations: no two disks answer one (Adapter, Target, LUN)' ($dup -join '; ')
    $nvme = @(Get-Disk | Where-Object { "$($_.BusType)" -eq 'NVMe' })
    foreach ($d in $nvme) {
        $dd = Get-CimInstance Win32_DiskDrive | Where-Object { $_.Index -eq $d.Number }
        $ans = Prop $locs "$($d.Number)"
        Write-TestLine ("# NVMe disk {0}: Location '{1}', Path '{2}', SCSIPort {3} SCSITargetId {4} SCSILogicalUnit {5}; answered {6}" -f `
            $d.Number, $d.Location, $d.Path, $dd.SCSIPort, $dd.SCSITargetId, $dd.SCSILogicalUnit, `
            $(if ($ans) { "LUN $($ans.LUNID)" } else { 'nothing (left out)' }))
    }
    $byAdapter = $nvme | Group-Object { (Get-CimInstance Win32_DiskDrive | Where-Object Index -eq $_.Number).SCSIPort } | Where-Object Count -ge 2
    if (-not $byAdapter) {
        Skip 'NVMe: two namespaces of one controller answer distinct LUNs' 'this node has no NVMe controller with two namespaces (an Azure v6/v7 size with two data disks has)'
    } else {
        foreach ($g in $byAdapter) {
            $luns = @($g.Group | ForEach-Object { $a = Prop $locs "$($_.Number)"; if ($a) { $a.LUNID } })
            Check (@($luns | Select-Object -Unique).Count -eq $luns.Count) "NVMe controller $($g.Name): its namespaces answer distinct LUNs ($($luns -join ', '))"
        }
    }
} finally {
    if (-not $Keep) {
        foreach ($d in $disks) {
            Remove-TestVhd $d.File
        }
    }
}
Complete-Tests
