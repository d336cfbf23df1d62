<#
.SYNOPSIS
  The disk and volume groups of csi-proxy on a real Windows node, with a
  throw-away VHDX: identity strings against Windows' own storage management,
  the boot-disk refusals, the CSI staging flow, growth after a disk expansion.
  See README.md in this directory. NOT RUN by the team yet.
#>
param(
    [Parameter(Mandatory = $true)] [string] $Cli,
    [string] $WorkDir = "$env:TEMP\csi-proxy-vhd",
    [string] $Kubelet = 'C:\var\lib\kubelet',
    [switch] $Keep
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

# --- calling the service ----------------------------------------------------
# The request goes through a file (@file): PowerShell 5.1 mangles double
# quotes in native command arguments.
$reqFile = Join-Path $env:TEMP 'csi-proxy-rpc.json'
function Rpc([string] $Group, [string] $Version, [string] $Method, $Body = $null) {
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
function Expect-Ok($r, [string] $name) { Check ($r.Code -eq 0) $name $r.Out; $r }
function Expect-Code($r, [int] $code, [string] $text, [string] $name) {
    Check (($r.Code -eq $code) -and ($r.Out -like "*$text*")) $name "exit $($r.Code), want $code with '$text': $($r.Out)"
}
function Prop($obj, [string] $name) { # a map entry / field that may be absent (proto3 JSON)
    if ($null -eq $obj) { return $null }
    $p = $obj.PSObject.Properties[$name]
    if ($p) { $p.Value } else { $null }
}

# --- upstream's page83 rule, independently, in C# ------------------------------
# IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceIdProperty) on \\.\PhysicalDriveN;
# the first identifier with device association and an ASCII (as is) or binary
# (lower-case hex) code set. This is what upstream's GetDiskPage83ID returns.
Add-Type -TypeDefinition @'
using System;
using System.Runtime.InteropServices;
using System.Text;
using Microsoft.Win32.SafeHandles;
public static class Page83 {
    [DllImport("kernel32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
    static extern SafeFileHandle CreateFile(string name, uint access, uint share, IntPtr sa, uint disp, uint flags, IntPtr tmpl);
    [DllImport("kernel32.dll", SetLastError = true)]
    static extern bool DeviceIoControl(SafeFileHandle h, uint code, byte[] inb, int inl, byte[] outb, int outl, out int ret, IntPtr ov);
    public static string Get(int disk) {
        using (var h = CreateFile(@"\\.\PhysicalDrive" + disk, 0, 3, IntPtr.Zero, 3, 0, IntPtr.Zero)) {
            if (h.IsInvalid) throw new Exception("open disk " + disk + ": " + Marshal.GetLastWin32Error());
            var q = new byte[12]; // STORAGE_PROPERTY_QUERY: PropertyId 2 (StorageDeviceIdProperty), standard query
            BitConverter.GetBytes(2).CopyTo(q, 0);
            var b = new byte[4096]; int n;
            if (!DeviceIoControl(h, 0x002d1400, q, q.Length, b, b.Length, out n, IntPtr.Zero)) return "";
            int count = BitConverter.ToInt32(b, 8), off = 12;
            for (int i = 0; i < count && off + 16 <= n; i++) {
                int cs = BitConverter.ToInt32(b, off), size = BitConverter.ToUInt16(b, off + 8);
                int next = BitConverter.ToUInt16(b, off + 10), assoc = BitConverter.ToInt32(b, off + 12);
                if (assoc == 0 && (cs == 1 || cs == 2)) {
                    if (cs == 2) { var s = Encoding.ASCII.GetString(b, off + 16, size); int z = s.IndexOf('\0'); return z >= 0 ? s.Substring(0, z) : s; }
                    var sb = new StringBuilder(); for (int k = 0; k < size; k++) sb.Append(b[off + 16 + k].ToString("x2")); return sb.ToString();
                }
                if (next == 0) break;
                off += next;
            }
            return "";
        }
    }
}
'@

# Writes bytes at the start of a RAW volume, as a Linux mkfs would: the
# volume handle, FSCTL_LOCK_VOLUME, WriteFile, FSCTL_DISMOUNT_VOLUME.
Add-Type -TypeDefinition @'
using System;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
public static class RawVolume {
    [DllImport("kernel32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
    static extern SafeFileHandle CreateFile(string name, uint access, uint share, IntPtr sa, uint disp, uint flags, IntPtr tmpl);
    [DllImport("kernel32.dll", SetLastError = true)]
    static extern bool DeviceIoControl(SafeFileHandle h, uint code, IntPtr inb, int inl, IntPtr outb, int outl, out int ret, IntPtr ov);
    [DllImport("kernel32.dll", SetLastError = true)]
    static extern bool WriteFile(SafeFileHandle h, byte[] b, int n, out int done, IntPtr ov);
    public static void WriteHead(string volume, byte[] data) {
        using (var h = CreateFile(volume, 0xC0000000, 3, IntPtr.Zero, 3, 0, IntPtr.Zero)) {
            if (h.IsInvalid) throw new Exception("open " + volume + ": " + Marshal.GetLastWin32Error());
            int r;
            if (!DeviceIoControl(h, 0x00090018, IntPtr.Zero, 0, IntPtr.Zero, 0, out r, IntPtr.Zero)) throw new Exception("FSCTL_LOCK_VOLUME: " + Marshal.GetLastWin32Error());
            if (!WriteFile(h, data, data.Length, out r, IntPtr.Zero) || r != data.Length) throw new Exception("WriteFile: " + Marshal.GetLastWin32Error());
            DeviceIoControl(h, 0x00090020, IntPtr.Zero, 0, IntPtr.Zero, 0, out r, IntPtr.Zero);
        }
    }
}
'@

# Upstream's ListDiskLocations parse of MSFT_Disk.Location.
function Parse-Location([string] $loc) {
    $s = $loc -split ':'
    if ($s.Count -lt 5) { return $null }
    $d = @{ Adapter = ''; Bus = ''; Target = ''; LUNID = '' }; $found = $false
    foreach ($item in $s) {
        $w = $item.Trim() -split ' '
        if ($w.Count -eq 2) {
            $found = $true
            switch ($w[0].Trim()) { 'Adapter' { $d.Adapter = $w[1].Trim() } 'Bus' { $d.Bus = $w[1].Trim() } 'Target' { $d.Target = $w[1].Trim() } 'LUN' { $d.LUNID = $w[1].Trim() } }
        }
    }
    if ($found) { $d } else { $null }
}

# --- the VHDX ----------------------------------------------------------------------
New-Item -ItemType Directory -Force -Path $WorkDir | Out-Null
$vhd = Join-Path $WorkDir 'csi-proxy-test.vhdx'
function Diskpart([string[]] $lines) {
    $f = Join-Path $env:TEMP 'csi-proxy-diskpart.txt'
    [IO.File]::WriteAllLines($f, $lines)
    $o = & diskpart.exe /s $f
    if ($LASTEXITCODE -ne 0) { throw "diskpart: $($o -join ' ')" }
}
if (Test-Path $vhd) { try { Diskpart @("select vdisk file=`"$vhd`"", 'detach vdisk') } catch {}; Remove-Item $vhd }
Diskpart @("create vdisk file=`"$vhd`" maximum=1024 type=expandable", "select vdisk file=`"$vhd`"", 'attach vdisk')
Start-Sleep -Seconds 2
$disk = Get-Disk | Where-Object { $_.Location -eq $vhd -or $_.Location -like "*csi-proxy-test.vhdx" } | Select-Object -First 1
if (-not $disk) { throw "the attached VHDX does not show in Get-Disk" }
$n = [int] $disk.Number
Write-Output "# VHDX $vhd is disk $n"

try {
    # --- identity strings, every disk ---------------------------------------------
    Claim 'README verification table, disk ListDiskIDs / ListDiskLocations / GetDiskStats / GetDiskState: the strings Windows'' storage management reports (DRIVER-CONTRACTS section 9 facts 18, 19)'
    $ids = Expect-Ok (Rpc disk v1 ListDiskIDs) 'ListDiskIDs'
    $locs = Expect-Ok (Rpc disk v1 ListDiskLocations) 'ListDiskLocations'
    $idsOld = Expect-Ok (Rpc disk v1beta1 ListDiskIDs) 'ListDiskIDs (v1beta1)'
    foreach ($d in Get-Disk) {
        $k = "$($d.Number)"
        $got = Prop $ids.Json.diskIDs $k
        $p83 = "$(Prop $got 'page83')"; $sn = "$(Prop $got 'serial_number')"
        Check ($p83 -ceq [Page83]::Get([int] $d.Number)) "disk ${k}: page83 '$p83' is upstream's"
        Check ($sn -ceq "$($d.SerialNumber)") "disk ${k}: serial '$sn' is MSFT_Disk.SerialNumber '$($d.SerialNumber)'"
        $old = Prop (Prop $idsOld.Json.diskIDs $k) 'identifiers'
        Check (("$(Prop $old 'page83')" -ceq $p83) -and ("$(Prop $old 'serialNumber')" -ceq $sn)) "disk ${k}: v1beta1 identifiers map agrees"
        $want = Parse-Location "$($d.Location)"
        $l = Prop $locs.Json.disk_locations $k
        if ($null -eq $want) {
            Check ($null -eq $l) "disk ${k}: no location ('$($d.Location)'), left out"
        } else {
            $g = @{ Adapter = "$(Prop $l 'Adapter')"; Bus = "$(Prop $l 'Bus')"; Target = "$(Prop $l 'Target')"; LUNID = "$(Prop $l 'LUNID')" }
            Check (($g.Adapter -ceq $want.Adapter) -and ($g.Bus -ceq $want.Bus) -and ($g.Target -ceq $want.Target) -and ($g.LUNID -ceq $want.LUNID)) `
                "disk ${k}: location matches '$($d.Location)'" "got $($g | ConvertTo-Json -Compress)"
        }
        $st = Rpc disk v1 GetDiskStats @{ disk_number = [int] $d.Number }
        Check ([int64] (Prop $st.Json 'total_bytes') -eq [int64] $d.Size) "disk ${k}: GetDiskStats = Size $($d.Size)"
        $gs = Rpc disk v1 GetDiskState @{ disk_number = [int] $d.Number }
        Check ([bool] (Prop $gs.Json 'is_online') -eq (-not $d.IsOffline)) "disk ${k}: GetDiskState = not IsOffline"
    }

    # --- more than one instance of each pipe ----------------------------------------------
    Claim 'README "Security model" 1: every pipe instance is created with the group''s security descriptor (several instances)'
    # A DACL that does not let the service's account create pipe instances
    # leaves one instance: a second client (EBS opens one inside
    # FindDevicePath) would wait. Two clients held open at once must both connect.
    $c1 = New-Object IO.Pipes.NamedPipeClientStream('.', 'csi-proxy-disk-v1', [IO.Pipes.PipeDirection]::InOut)
    $c2 = New-Object IO.Pipes.NamedPipeClientStream('.', 'csi-proxy-disk-v1', [IO.Pipes.PipeDirection]::InOut)
    try {
        $c1.Connect(2000); $c2.Connect(2000)
        Check ($c1.IsConnected -and $c2.IsConnected) 'two clients connected to csi-proxy-disk-v1 at once (2 instances)'
    } catch { Bad 'two clients connected to csi-proxy-disk-v1 at once (2 instances)' "$_" } finally { $c1.Dispose(); $c2.Dispose() }
    $three = 1..3 | ForEach-Object { Start-Job -ScriptBlock { param($cli) & $cli disk v1 ListDiskIDs | Out-Null; $LASTEXITCODE } -ArgumentList $Cli }
    $codes = @($three | Wait-Job -Timeout 60 | Receive-Job)
    Check (($codes.Count -eq 3) -and (@($codes | Where-Object { $_ -ne 0 }).Count -eq 0)) 'three concurrent ListDiskIDs all answered (3 instances)' "exit codes: $codes"

    # --- optical drives ------------------------------------------------------------------
    Claim 'README verification table, disk: an unreadable disk (an optical drive) is left out of the lists'
    # An empty DVD drive answers ERROR_NOT_READY; a mounted ISO's volume says
    # DeviceNumber 0 with DeviceType FILE_DEVICE_CD_ROM. Neither may fail a
    # listing or show as a volume of disk 0. (Add an empty DVD drive to the VM,
    # or Mount-DiskImage an ISO, to exercise this; skipped otherwise.)
    $cds = @(Get-CimInstance Win32_CDROMDrive -ErrorAction SilentlyContinue)
    if ($cds.Count -gt 0) {
        Check ($ids.Code -eq 0) "ListDiskIDs answers with $($cds.Count) optical drive(s) present"
        foreach ($cv in @(Get-Volume | Where-Object { $_.DriveType -eq 'CD-ROM' })) {
            $on0 = @((Rpc volume v1 ListVolumesOnDisk @{ disk_number = 0 }).Json.volume_ids)
            Check (-not ($on0 -contains $cv.UniqueId)) "the CD/DVD volume $($cv.UniqueId) is not listed on disk 0"
        }
    } else { Write-Output '# no optical drive: the optical-drive checks not exercised' }

    # --- the boot disk -----------------------------------------------------------------
    Claim 'README "Behaviour compared with upstream", disk and volume: PartitionDisk, FormatVolume, ResizeVolume and SetDiskState(offline) refuse the boot disk'
    # PartitionDisk on the boot disk would change nothing (it
    # has C:): a no-op success, the layout untouched.
    $boot = Get-Disk | Where-Object { $_.IsBoot -or $_.IsSystem } | Select-Object -First 1
    $bootParts = @(Get-Partition -DiskNumber $boot.Number).Count
    Expect-Ok (Rpc disk v1 PartitionDisk @{ disk_number = [int] $boot.Number }) "PartitionDisk on boot disk $($boot.Number) is a no-op (it has C:)" | Out-Null
    Check (@(Get-Partition -DiskNumber $boot.Number).Count -eq $bootParts) "boot disk $($boot.Number) still has $bootParts partitions"
    Expect-Code (Rpc disk v1 SetDiskState @{ disk_number = [int] $boot.Number; is_online = $false }) 9 'refusing to take it offline' 'SetDiskState refuses to take the boot disk offline'
    $cvol = (Get-Volume -DriveLetter C).UniqueId
    Expect-Code (Rpc volume v1 FormatVolume @{ volume_id = $cvol }) 9 'refusing to format' "FormatVolume refuses C: ($cvol)"
    Expect-Code (Rpc volume v1 ResizeVolume @{ volume_id = $cvol; size_bytes = 0 }) 9 'refusing to resize' 'ResizeVolume refuses C:'

    # --- volumes Windows needs, from sources the service does not read --
    Claim 'README "Security model" 9: volumes Windows needs (boot, system, page file, dump) are never changed'
    # The service finds them with IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, the
    # partition type, GetSystemWindowsDirectoryW and the PagingFiles /
    # ExistingPageFiles / DumpFile / DedicatedDumpFile registry values, which
    # Wine does not have; here Windows' own storage management and WMI say
    # which volumes they are, and every change to them must be refused.
    $needDir = Join-Path $Kubelet 'plugins\csi-proxy-test\needed'
    New-Item -ItemType Directory -Force -Path $needDir | Out-Null
    function Volume-Of([string] $path) { # the volume GUID path holding $path (a drive letter path)
        if ($path -match '^\\\?\?\\') { $path = $path.Substring(4) }
        $v = Get-Volume -DriveLetter $path[0] -ErrorAction SilentlyContinue
        if ($v) { $v.UniqueId } else { $null }
    }
    function Refused([string] $vol, [string] $why, [string] $label) {
        Expect-Code (Rpc volume v1 MountVolume @{ volume_id = $vol; target_path = $needDir }) 9 "$why" "MountVolume refuses $label ($vol): $why" | Out-Null
        Expect-Code (Rpc volume v1 UnmountVolume @{ volume_id = $vol; target_path = $needDir }) 9 'refusing to unmount it' "UnmountVolume refuses $label" | Out-Null
        Expect-Code (Rpc volume v1 WriteVolumeCache @{ volume_id = $vol }) 9 'refusing to flush its cache' "WriteVolumeCache refuses $label" | Out-Null
        Expect-Code (Rpc volume v1beta3 FormatVolume @{ volume_id = $vol }) 9 'refusing to format it' "FormatVolume refuses $label" | Out-Null
        Expect-Ok (Rpc volume v1 GetVolumeStats @{ volume_id = $vol }) "GetVolumeStats still answers for $label" | Out-Null
    }
    Refused $cvol 'is the boot volume (it holds Windows)' "the boot volume C:"
    foreach ($p in @(Get-Partition | Where-Object { $_.IsSystem })) {
        $sv = @($p.AccessPaths | Where-Object { $_ -like '\\?\Volume*' })[0]
        if ($sv) { Refused $sv 'is the system volume' "the system partition (disk $($p.DiskNumber), partition $($p.PartitionNumber))" }
    }
    foreach ($pf in @(Get-CimInstance Win32_PageFileUsage)) { # WMI: the page files in use
        $pv = Volume-Of $pf.Name
        if ($pv) { Refused $pv 'holds the page file' "the page-file volume of $($pf.Name)" }
    }
    $cc = Get-ItemProperty 'HKLM:\SYSTEM\CurrentControlSet\Control\CrashControl'
    foreach ($name in @('DedicatedDumpFile', 'DumpFile')) {
        $f = $cc.PSObject.Properties[$name]
        if ($f -and $f.Value) {
            $dv = Volume-Of ([Environment]::ExpandEnvironmentVariables([string] $f.Value))
            if ($dv) { Refused $dv 'holds the crash dump file' "the volume of $name $($f.Value)" }
        }
    }
    Check (-not (Get-Item $needDir).Attributes.HasFlag([IO.FileAttributes]::ReparsePoint)) 'nothing was mounted on the refusals'

    # --- the staging flow ---------------------------------------------------------------
    Claim 'README verification table, volume: the staging flow as a driver runs it, idempotent mount and unmount'
    for ($i = 0; $i -lt 2; $i++) { Expect-Ok (Rpc disk v1 PartitionDisk @{ disk_number = $n }) "PartitionDisk $n (call $($i + 1))" | Out-Null }
    $d2 = Get-Disk -Number $n
    Check ($d2.PartitionStyle -eq 'GPT') "disk $n is GPT now"
    $parts = @(Get-Partition -DiskNumber $n | Where-Object { $_.Type -eq 'Basic' })
    Check ($parts.Count -eq 1 -and -not $parts[0].DriveLetter) "one basic partition, no drive letter"
    $lv = Expect-Ok (Rpc volume v1 ListVolumesOnDisk @{ disk_number = $n }) 'ListVolumesOnDisk'
    $vol = @($lv.Json.volume_ids)[0]
    Check ($vol -ceq ($parts[0] | Get-Volume).UniqueId) "volume ID '$vol' is MSFT_Volume.UniqueId"
    $lv1 = Rpc volume v1 ListVolumesOnDisk @{ disk_number = $n; partition_number = [int] $parts[0].PartitionNumber }
    Check (@($lv1.Json.volume_ids)[0] -ceq $vol) 'ListVolumesOnDisk by partition number'
    Check (-not [bool] (Prop (Rpc volume v1 IsVolumeFormatted @{ volume_id = $vol }).Json 'formatted')) 'IsVolumeFormatted: false'
    # Right after an IOCTL-made partition: the Storage Management provider's
    # cache does not hold the volume yet (one cache update on a miss), and
    # every WMI proxy needs its own blanket (packet privacy)
    Expect-Ok (Rpc volume v1 FormatVolume @{ volume_id = $vol }) 'FormatVolume (MSFT_Volume.Format over WMI) right after PartitionDisk' | Out-Null
    Check ([bool] (Prop (Rpc volume v1 IsVolumeFormatted @{ volume_id = $vol }).Json 'formatted')) 'IsVolumeFormatted: true'
    Check ((Get-Volume -UniqueId $vol).FileSystem -eq 'NTFS') 'Get-Volume says NTFS'

    # A data volume that Windows gave a drive letter (a restored snapshot)
    # is no volume Windows needs: the rest of the flow runs with one.
    $parts[0] | Add-PartitionAccessPath -AssignDriveLetter
    $letter = (Get-Partition -DiskNumber $n -PartitionNumber $parts[0].PartitionNumber).DriveLetter
    Check ([bool] $letter) "the VHDX volume has drive letter ${letter}: now"
    $target = Join-Path $Kubelet 'plugins\kubernetes.io\csi\pv\csi-proxy-test\globalmount'
    New-Item -ItemType Directory -Force -Path $target | Out-Null
    for ($i = 0; $i -lt 2; $i++) { Expect-Ok (Rpc volume v1 MountVolume @{ volume_id = $vol; target_path = $target }) "MountVolume (call $($i + 1))" | Out-Null }
    Check ((Get-Partition -DiskNumber $n -PartitionNumber $parts[0].PartitionNumber).AccessPaths -contains "$target\") 'Get-Partition lists the mount point'
    $t = Rpc volume v1 GetVolumeIDFromTargetPath @{ target_path = $target }
    Check ((Prop $t.Json 'volume_id') -ceq $vol) 'GetVolumeIDFromTargetPath'
    $c = Rpc volume v2alpha1 GetClosestVolumeIDFromTargetPath @{ target_path = $target }
    Check ((Prop $c.Json 'volume_id') -ceq $vol) 'GetClosestVolumeIDFromTargetPath (the mount)'
    $c = Rpc volume v2alpha1 GetClosestVolumeIDFromTargetPath @{ target_path = $Kubelet }
    Check ((Prop $c.Json 'volume_id') -ceq (Get-Volume -DriveLetter ($Kubelet[0])).UniqueId) 'GetClosestVolumeIDFromTargetPath (the drive)'
    $s = Rpc volume v1 GetVolumeStats @{ volume_id = $vol }
    $gv = Get-Volume -UniqueId $vol
    Check (([int64] (Prop $s.Json 'total_bytes') -eq [int64] $gv.Size) -and ([int64] (Prop $s.Json 'used_bytes') -eq [int64] ($gv.Size - $gv.SizeRemaining))) `
        "GetVolumeStats = Get-Volume Size/Size-SizeRemaining" $s.Out
    $dn = Rpc volume v1 GetDiskNumberFromVolumeID @{ volume_id = $vol }
    Check ([int] (Prop $dn.Json 'disk_number') -eq $n) 'GetDiskNumberFromVolumeID'
    Expect-Ok (Rpc volume v1 WriteVolumeCache @{ volume_id = $vol }) 'WriteVolumeCache' | Out-Null
    $before = [int64] (Prop $s.Json 'total_bytes')
    Expect-Ok (Rpc volume v1 ResizeVolume @{ volume_id = $vol; size_bytes = 0 }) 'ResizeVolume 0 with no room (nothing to do)' | Out-Null
    for ($i = 0; $i -lt 2; $i++) { Expect-Ok (Rpc volume v1 UnmountVolume @{ volume_id = $vol; target_path = $target }) "UnmountVolume (call $($i + 1))" | Out-Null }
    Check (Test-Path $target) 'the directory stays'
    Expect-Code (Rpc volume v1 GetVolumeIDFromTargetPath @{ target_path = $target }) 9 'not a mounted folder' 'not a mounted folder any more'

    # --- growth after the disk was expanded ------------------------------------------------
    Claim 'README verification table, volume ResizeVolume: the volume grows to the expanded disk (DRIVER-CONTRACTS section 9 fact 21)'
    Diskpart @("select vdisk file=`"$vhd`"", 'detach vdisk')
    Diskpart @("select vdisk file=`"$vhd`"", 'expand vdisk maximum=2048', 'attach vdisk')
    Start-Sleep -Seconds 2
    Expect-Ok (Rpc disk v1 Rescan) 'Rescan (MSFT_StorageSetting.UpdateHostStorageCache over WMI)' | Out-Null
    # The WMI service restarted under the running csi-proxy: its cached
    # connection is dead; the next WMI call must rebuild it (and, for an
    # idempotent call, retry once) instead of failing until csi-proxy restarts.
    Restart-Service winmgmt -Force
    Start-Sleep -Seconds 5
    for ($i = 0; $i -lt 2; $i++) {
        Expect-Ok (Rpc disk v1 Rescan) "Rescan after Restart-Service winmgmt (call $($i + 1)): the WMI connection is rebuilt" | Out-Null
    }
    $st = Rpc disk v1 GetDiskStats @{ disk_number = $n }
    Check ([int64] (Prop $st.Json 'total_bytes') -eq 2GB) 'GetDiskStats shows 2 GiB'
    Expect-Ok (Rpc volume v1 ResizeVolume @{ volume_id = $vol; size_bytes = 0 }) 'ResizeVolume 0 after the expansion' | Out-Null
    $s = Rpc volume v1 GetVolumeStats @{ volume_id = $vol }
    $after = [int64] (Prop $s.Json 'total_bytes')
    Check ($after -gt $before + 900MB) "the volume grew: $before -> $after bytes"
    Check ((Get-Partition -DiskNumber $n -PartitionNumber $parts[0].PartitionNumber).Size -gt 1.9GB) 'Get-Partition shows the larger partition'
    Check ((Get-Volume -UniqueId $vol).Size -eq $after) 'Get-Volume agrees'

    # A second expansion, ResizeVolume(0) with no Rescan before it: the
    # service refreshes the length itself (IOCTL_DISK_UPDATE_DRIVE_SIZE)
    Diskpart @("select vdisk file=`"$vhd`"", 'detach vdisk')
    Diskpart @("select vdisk file=`"$vhd`"", 'expand vdisk maximum=3072', 'attach vdisk')
    Start-Sleep -Seconds 2
    Expect-Ok (Rpc volume v1 ResizeVolume @{ volume_id = $vol; size_bytes = 0 }) 'ResizeVolume 0 after a second expansion, no Rescan' | Out-Null
    $s = Rpc volume v1 GetVolumeStats @{ volume_id = $vol }
    Check ([int64] (Prop $s.Json 'total_bytes') -gt $after + 900MB) "the volume grew again: $after -> $(Prop $s.Json 'total_bytes') bytes"

    # --- online / offline -------------------------------------------------------------------
    Claim 'README verification table, disk SetDiskState / GetDiskState against Get-Disk IsOffline'
    Expect-Ok (Rpc disk v1 SetDiskState @{ disk_number = $n; is_online = $false }) 'SetDiskState offline' | Out-Null
    Check ((Get-Disk -Number $n).IsOffline) 'Get-Disk says offline'
    Check (@((Rpc volume v1 ListVolumesOnDisk @{ disk_number = $n }).Json.volume_ids).Count -eq 0) 'no volumes while offline'
    Expect-Ok (Rpc disk v1beta2 SetAttachState @{ diskID = "$n"; isOnline = $true }) 'SetAttachState online (v1beta2)' | Out-Null
    Check (-not (Get-Disk -Number $n).IsOffline) 'Get-Disk says online'
    # SetAttachState returns once the volumes exist (no sleep here)
    Check (@((Rpc volume v1 ListVolumesOnDisk @{ disk_number = $n }).Json.volume_ids) -contains $vol) 'the volume is listed right after SetAttachState(online)'

    # --- a clone beside its source (OfflineReason Collision) -------------------------------
    Claim 'README verification table, disk: a clone beside its source (a signature collision) comes online'
    $vhd2 = Join-Path $WorkDir 'csi-proxy-clone.vhdx'
    Diskpart @("select vdisk file=`"$vhd`"", 'detach vdisk')
    Copy-Item -Force $vhd $vhd2
    Diskpart @("select vdisk file=`"$vhd`"", 'attach vdisk')
    Diskpart @("select vdisk file=`"$vhd2`"", 'attach vdisk')
    Start-Sleep -Seconds 3
    $clone = Get-Disk | Where-Object { $_.Location -like '*csi-proxy-clone.vhdx' } | Select-Object -First 1
    if ($clone -and $clone.IsOffline) {
        Write-Output "# clone is disk $($clone.Number), OfflineReason $($clone.OfflineReason)"
        Expect-Ok (Rpc disk v1 SetDiskState @{ disk_number = [int] $clone.Number; is_online = $true }) 'SetDiskState(online) on a colliding clone' | Out-Null
        $c2d = Get-Disk -Number $clone.Number
        Check (-not $c2d.IsOffline) 'Get-Disk says the clone is online'
        Check ($c2d.Guid -ne (Get-Disk -Number $n).Guid) "the clone got its own disk GUID ($($c2d.Guid))"
        Check (@((Rpc volume v1 ListVolumesOnDisk @{ disk_number = [int] $clone.Number }).Json.volume_ids).Count -eq 1) 'the volume of the clone is listed at once'
    } else { Bad 'the clone attaches offline (collision)' "clone: $($clone | Out-String)" }
    try { Diskpart @("select vdisk file=`"$vhd2`"", 'detach vdisk') } catch {}
    Remove-Item -Force $vhd2 -ErrorAction SilentlyContinue

    # --- PartitionDisk on a RAW offline disk ----------------------------------------------
    Claim 'README verification table, disk: a RAW offline disk is brought online to be partitioned'
    $vhd3 = Join-Path $WorkDir 'csi-proxy-raw.vhdx'
    if (Test-Path $vhd3) { Remove-Item -Force $vhd3 }
    Diskpart @("create vdisk file=`"$vhd3`" maximum=256 type=expandable", "select vdisk file=`"$vhd3`"", 'attach vdisk')
    Start-Sleep -Seconds 2
    $raw = Get-Disk | Where-Object { $_.Location -like '*csi-proxy-raw.vhdx' } | Select-Object -First 1
    Set-Disk -Number $raw.Number -IsOffline $true
    Expect-Ok (Rpc disk v1 PartitionDisk @{ disk_number = [int] $raw.Number }) 'PartitionDisk on a RAW offline disk' | Out-Null
    Expect-Ok (Rpc disk v1 SetDiskState @{ disk_number = [int] $raw.Number; is_online = $true }) '... then SetDiskState(online)' | Out-Null
    Check (@((Rpc volume v1 ListVolumesOnDisk @{ disk_number = [int] $raw.Number }).Json.volume_ids).Count -eq 1) '... and ListVolumesOnDisk lists its volume'
    try { Diskpart @("select vdisk file=`"$vhd3`"", 'detach vdisk') } catch {}
    Remove-Item -Force $vhd3 -ErrorAction SilentlyContinue
    Expect-Code (Rpc disk v1 GetDiskStats @{ disk_number = 4000 }) 5 'disk 4000 not found' 'unknown disk: NOT_FOUND'

    # --- read-only disks --------------------------------------------------------------------
    Claim 'README "Behaviour compared with upstream", read-only disks: SetDiskState(online) and PartitionDisk clear DISK_ATTRIBUTE_READ_ONLY, audited; write-protected media is refused'
    # A disk reattached or restored from a snapshot may come back read-only
    # (Set-Disk -IsReadOnly $true makes one); SetDiskState(online) must
    # clear it in the same IOCTL_DISK_SET_DISK_ATTRIBUTES that clears
    # offline, and the audit record (Event Log, source csi-proxy) must say so.
    $vhd4 = Join-Path $WorkDir 'csi-proxy-ro.vhdx'
    if (Test-Path $vhd4) { Remove-Item -Force $vhd4 }
    Diskpart @("create vdisk file=`"$vhd4`" maximum=256 type=expandable", "select vdisk file=`"$vhd4`"", 'attach vdisk')
    Start-Sleep -Seconds 2
    $ro = Get-Disk | Where-Object { $_.Location -like '*csi-proxy-ro.vhdx' } | Select-Object -First 1
    $rn = [int] $ro.Number
    Set-Disk -Number $rn -IsOffline $true
    Set-Disk -Number $rn -IsReadOnly $true
    Check ((Get-Disk -Number $rn).IsReadOnly) "disk $rn is read-only and offline (the set-up)"
    $since = Get-Date
    Expect-Ok (Rpc disk v1 SetDiskState @{ disk_number = $rn; is_online = $true }) 'SetDiskState(online) of a read-only disk' | Out-Null
    $rd = Get-Disk -Number $rn
    Check ((-not $rd.IsOffline) -and (-not $rd.IsReadOnly)) "Get-Disk: disk $rn is online and not read-only" "IsOffline $($rd.IsOffline), IsReadOnly $($rd.IsReadOnly)"
    Start-Sleep -Seconds 1
    $rec = @(Get-WinEvent -FilterHashtable @{ LogName = 'Application'; ProviderName = 'csi-proxy'; StartTime = $since } -ErrorAction SilentlyContinue |
            Where-Object { $_.Message -like "*SetDiskState*changed=``[cleared the read-only attribute (DISK_ATTRIBUTE_READ_ONLY) of disk $rn``]*" })
    Check ($rec.Count -ge 1) 'the audit record in the Event Log says the read-only attribute was cleared'
    Set-Disk -Number $rn -IsReadOnly $true
    Expect-Ok (Rpc disk v1 PartitionDisk @{ disk_number = $rn }) 'PartitionDisk of a read-only RAW disk' | Out-Null
    $rd = Get-Disk -Number $rn
    Check ((-not $rd.IsReadOnly) -and ($rd.PartitionStyle -eq 'GPT')) "Get-Disk: disk $rn is writable and GPT" "IsReadOnly $($rd.IsReadOnly), $($rd.PartitionStyle)"
    $rv = @((Rpc volume v1 ListVolumesOnDisk @{ disk_number = $rn }).Json.volume_ids)[0]
    Expect-Ok (Rpc volume v1 FormatVolume @{ volume_id = $rv }) 'FormatVolume on the disk made writable' | Out-Null
    # Attached read-only, the VHDX is write-protected below the disk
    # attributes: IOCTL_DISK_IS_WRITABLE answers ERROR_WRITE_PROTECT. To
    # confirm on a node: that Windows reports it so, and not as the attribute.
    Diskpart @("select vdisk file=`"$vhd4`"", 'detach vdisk')
    Diskpart @("select vdisk file=`"$vhd4`"", 'attach vdisk readonly')
    Start-Sleep -Seconds 2
    $wp = Get-Disk | Where-Object { $_.Location -like '*csi-proxy-ro.vhdx' } | Select-Object -First 1
    Write-Output "# read-only attached VHDX: disk $($wp.Number), IsReadOnly $($wp.IsReadOnly), IsOffline $($wp.IsOffline)"
    if ($wp.IsOffline) {
        Expect-Code (Rpc disk v1 SetDiskState @{ disk_number = [int] $wp.Number; is_online = $true }) 9 `
            "disk $($wp.Number) is write-protected at the hardware" 'SetDiskState(online) of write-protected media: FAILED_PRECONDITION naming the disk'
    }
    Expect-Code (Rpc disk v1 PartitionDisk @{ disk_number = [int] $wp.Number }) 9 `
        "disk $($wp.Number) is write-protected at the hardware" 'PartitionDisk of write-protected media: FAILED_PRECONDITION naming the disk'
    try { Diskpart @("select vdisk file=`"$vhd4`"", 'detach vdisk') } catch {}
    Remove-Item -Force $vhd4 -ErrorAction SilentlyContinue

    # --- a foreign file system is not formatted over --------------------------------------
    Claim 'README "Behaviour compared with upstream", foreign file systems: FormatVolume refuses a volume holding ext4 (RAW to Windows), IsVolumeFormatted stays false'
    $vhd5 = Join-Path $WorkDir 'csi-proxy-ext4.vhdx'
    if (Test-Path $vhd5) { Remove-Item -Force $vhd5 }
    Diskpart @("create vdisk file=`"$vhd5`" maximum=256 type=expandable", "select vdisk file=`"$vhd5`"", 'attach vdisk')
    Start-Sleep -Seconds 2
    $fx = Get-Disk | Where-Object { $_.Location -like '*csi-proxy-ext4.vhdx' } | Select-Object -First 1
    Initialize-Disk -Number $fx.Number -PartitionStyle GPT
    $fp = New-Partition -DiskNumber $fx.Number -Size 128MB
    Start-Sleep -Seconds 2
    $fv = ($fp | Get-Volume).UniqueId
    # mkfs.ext4's superblock at 1024: s_log_block_size 2 (4 KiB), s_magic 0xEF53.
    $sb = New-Object byte[] 4096
    [BitConverter]::GetBytes([uint32] 65536).CopyTo($sb, 1024)
    [BitConverter]::GetBytes([uint32] 2).CopyTo($sb, 1048)
    $sb[1080] = 0x53; $sb[1081] = 0xEF; $sb[1082] = 1
    [RawVolume]::WriteHead($fv.TrimEnd('\'), $sb)
    Check (-not [bool] (Prop (Rpc volume v1 IsVolumeFormatted @{ volume_id = $fv }).Json 'formatted')) 'IsVolumeFormatted: false (upstream''s answer)'
    Expect-Code (Rpc volume v1 FormatVolume @{ volume_id = $fv }) 9 'holds ext2/3/4 (superblock magic 0xEF53 at byte 1080)' 'FormatVolume refuses the ext4 volume, naming it'
    Check ("$((Get-Volume -UniqueId $fv).FileSystem)" -eq '') 'the volume is still RAW (not formatted)'
    try { Diskpart @("select vdisk file=`"$vhd5`"", 'detach vdisk') } catch {}
    Remove-Item -Force $vhd5 -ErrorAction SilentlyContinue

    # --- resize with the defragmentation service disabled ---------------------------------
    Claim 'README "Behaviour compared with upstream", resize without the defragmentation service: ResizeVolume grows a volume while defragsvc is stopped and disabled'
    $vhd6 = Join-Path $WorkDir 'csi-proxy-nodefrag.vhdx'
    if (Test-Path $vhd6) { Remove-Item -Force $vhd6 }
    Diskpart @("create vdisk file=`"$vhd6`" maximum=512 type=expandable", "select vdisk file=`"$vhd6`"", 'attach vdisk')
    Start-Sleep -Seconds 2
    $gx = Get-Disk | Where-Object { $_.Location -like '*csi-proxy-nodefrag.vhdx' } | Select-Object -First 1
    Initialize-Disk -Number $gx.Number -PartitionStyle GPT
    $gp = New-Partition -DiskNumber $gx.Number -Size 200MB
    $gp | Format-Volume -FileSystem NTFS -Confirm:$false | Out-Null
    $gv = ($gp | Get-Volume).UniqueId
    $defrag = Get-Service defragsvc
    $startType = $defrag.StartType
    try {
        Stop-Service defragsvc -Force -ErrorAction SilentlyContinue
        Set-Service defragsvc -StartupType Disabled
        try {
            Get-PartitionSupportedSize -DiskNumber $gx.Number -PartitionNumber $gp.PartitionNumber -ErrorAction Stop | Out-Null
            Write-Output '# Get-PartitionSupportedSize (upstream''s path) answered with defragsvc disabled'
        } catch { Write-Output "# Get-PartitionSupportedSize (upstream's path) fails with defragsvc disabled: $_" }
        $b = [int64] (Prop (Rpc volume v1 GetVolumeStats @{ volume_id = $gv }).Json 'total_bytes')
        Expect-Ok (Rpc volume v1 ResizeVolume @{ volume_id = $gv; size_bytes = 0 }) 'ResizeVolume 0 with defragsvc stopped and disabled' | Out-Null
        $a = [int64] (Prop (Rpc volume v1 GetVolumeStats @{ volume_id = $gv }).Json 'total_bytes')
        Check ($a -gt $b + 250MB) "the volume grew without defragsvc: $b -> $a bytes"
        Check ((Get-Service defragsvc).Status -ne 'Running') 'defragsvc was not started for it'
    } finally {
        Set-Service defragsvc -StartupType $startType
        try { Diskpart @("select vdisk file=`"$vhd6`"", 'detach vdisk') } catch {}
        Remove-Item -Force $vhd6 -ErrorAction SilentlyContinue
    }
} finally {
    if (-not $Keep) {
        try { Diskpart @("select vdisk file=`"$vhd`"", 'detach vdisk') } catch { Write-Output "# detach: $_" }
        Remove-Item -Force $vhd -ErrorAction SilentlyContinue
    }
}
Complete-Tests
