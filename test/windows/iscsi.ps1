<#
.SYNOPSIS
  The iscsi group of csi-proxy on a real Windows Server node: the Win32
  back-end (host/iscsi_win.c on iscsidsc.dll) against the Windows iSCSI
  Target Server role on the SAME node, through one of the node's own
  IPv4 addresses (loopback is refused by the portal rule), driven
  through csi-proxy-cli.exe exactly as a CSI driver drives it, with the disk
  and volume groups staging the iSCSI disk. Windows' own cmdlets
  (Get-IscsiTargetPortal, Get-IscsiSession, Get-Disk, ...) are the
  reference. See README.md in this directory. NOT RUN by the team yet.

  What it checks:
    1. AddTargetPortal (port 0 is 3260; twice: a no-op), ListTargetPortals;
    2. DiscoverTargetPortal lists both test targets; a portal not registered
       is NOT_FOUND;
    3. ConnectTarget without authentication (twice), a session that is
       NOT persistent (Get-IscsiSession IsPersistent false, no
       MSiSCSIInitiator_PersistentLoginClass entry: as upstream, the login
       does not come back at boot), GetTargetDisks = Get-Disk's numbers of
       the session's disks, as decimal strings;
    4. ConnectTarget with one-way CHAP: a wrong secret is PERMISSION_DENIED
       (ISDSC_AUTHENTICATION_FAILURE) and leaves no persistent login, the
       right one connects; SetMutualChapSecret: 9 bytes refused, 16 set;
    5. the disk of the plain target through the disk and volume groups:
       online, PartitionDisk, FormatVolume, MountVolume under the kubelet
       directory, a file written and read back, UnmountVolume;
    6. the plain target's session made persistent as an older csi-proxy
       left it (Register-IscsiSession; the initiator instance Windows then
       reports is printed), then DisconnectTarget (twice: a no-op) removes
       it: no session and no persistent login left, GetTargetDisks empty;
       RemoveTargetPortal (twice: NOT_FOUND);
    7. with MSiSCSI stopped: FAILED_PRECONDITION naming the service (and the
       code the API really gives, printed: iscsidsc_win.c guesses
       ISDSC_SERVICE_NOT_RUNNING or RPC_S_SERVER_UNAVAILABLE); the health
       service NOT_SERVING for the iscsi pipes, SERVING once it runs again;
    8. neither CHAP secret in the service's log or audit file.

  Before running:
    - Windows Server 2016 or later, elevated PowerShell, a throw-away node
      (it installs a role and creates targets, a VHDX and a disk).
    - csi-proxy.exe running as the service (or in a console) from this
      build, with its log redirected to a file given in -ServiceLog, and
      csi-proxy-cli.exe next to this script or given in -Cli.
    - The script installs FS-iSCSITarget-Server if missing (no reboot is
      needed for it), starts MSiSCSI and sets it to Automatic.
    - Disks of the SAN policy "Offline Shared" come up offline; the script
      brings the test disk online through the disk group (SetDiskState).
.EXAMPLE
  .\iscsi.ps1 -Cli C:\csi-test\csi-proxy-cli.exe -ServiceLog C:\csi-test\csi-proxy.log
#>
param(
    [Parameter(Mandatory = $true)] [string] $Cli,
    [string] $Kubelet = 'C:\var\lib\kubelet',
    [string] $WorkDir = 'C:\csi-proxy-iscsi-test',
    [string[]] $ServiceLog = @()
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

# The request goes through a file (@file): PowerShell 5.1 mangles double
# quotes in native command arguments. The file may hold a CHAP secret while
# the call runs and is deleted at once.
$reqFile = Join-Path $env:TEMP 'csi-proxy-iscsi-rpc.json'
function Rpc([string] $Group, [string] $Version, [string] $Method, $Body = $null) {
    $a = @($Group, $Version, $Method)
    if ($null -ne $Body) {
        [IO.File]::WriteAllText($reqFile, ($Body | ConvertTo-Json -Compress -Depth 6))
        $a += "@$reqFile"
    }
    try {
        $r = Invoke-Native $Cli $a
    } finally {
        Remove-Item -Force $reqFile -ErrorAction SilentlyContinue
    }
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
function Prop($obj, [string] $name) { # a field that may be absent (proto3 JSON)
    if ($null -eq $obj) { return $null }
    $p = $obj.PSObject.Properties[$name]
    if ($p) { $p.Value } else { $null }
}

# The node's own address, not loopback or link-local: the group refuses those
# unless groups.iscsi.allowedPortals names them.
$portalIp = (Get-NetIPAddress -AddressFamily IPv4 | Where-Object {
        $_.IPAddress -notlike '127.*' -and $_.IPAddress -notlike '169.254.*' } | Select-Object -First 1).IPAddress
if (-not $portalIp) { throw 'no IPv4 address on this node other than loopback and link-local' }
$portal = @{ target_address = $portalIp; target_port = 0 }
$chapUser = 'csiproxyuser'
$chapSecret = 'Chap-S3cret-1234'   # 16 bytes: the initiator takes 12 to 16
$wrongSecret = 'Wr0ng-S3cret-999'
$mutualSecret = 'Mutual-S3cret-16'
$shortSecret = 'Short-S3c'          # 9 bytes

# --- 0. the target server and the initiator --------------------------------------
if (-not (Get-WindowsFeature FS-iSCSITarget-Server).Installed) {
    Install-WindowsFeature FS-iSCSITarget-Server | Out-Null
}
# The target server refuses an initiator on its own node unless AllowLoopBack
# is set (upstream's integration suite sets it the same way).
Set-ItemProperty -Path 'HKLM:\SOFTWARE\Microsoft\iSCSI Target' -Name AllowLoopBack -Value 1
Restart-Service WinTarget
Set-Service MSiSCSI -StartupType Automatic
Start-Service MSiSCSI
$initiator = (Get-InitiatorPort | Where-Object { $_.ConnectionType -eq 'iSCSI' } | Select-Object -First 1).NodeAddress
if (-not $initiator) { throw 'no iSCSI initiator port: is MSiSCSI running?' }
New-Item -ItemType Directory -Force $WorkDir | Out-Null
$plainVhd = Join-Path $WorkDir 'plain.vhdx'
$chapVhd = Join-Path $WorkDir 'chap.vhdx'
foreach ($t in 'csiproxy-plain', 'csiproxy-chap') {
    if (Get-IscsiServerTarget -TargetName $t -ErrorAction SilentlyContinue) { throw "target $t exists: remove it first" }
}
New-IscsiVirtualDisk -Path $plainVhd -SizeBytes 1GB | Out-Null
New-IscsiVirtualDisk -Path $chapVhd -SizeBytes 1GB | Out-Null
New-IscsiServerTarget -TargetName csiproxy-plain -InitiatorIds "IQN:$initiator" | Out-Null
New-IscsiServerTarget -TargetName csiproxy-chap -InitiatorIds "IQN:$initiator" | Out-Null
$cred = New-Object pscredential($chapUser, (ConvertTo-SecureString $chapSecret -AsPlainText -Force))
Set-IscsiServerTarget -TargetName csiproxy-chap -EnableChap $true -Chap $cred
Add-IscsiVirtualDiskTargetMapping -TargetName csiproxy-plain -Path $plainVhd
Add-IscsiVirtualDiskTargetMapping -TargetName csiproxy-chap -Path $chapVhd
$plainIqn = (Get-IscsiServerTarget -TargetName csiproxy-plain).TargetIqn.ToString()
$chapIqn = (Get-IscsiServerTarget -TargetName csiproxy-chap).TargetIqn.ToString()
Write-Output "# initiator $initiator; targets $plainIqn, $chapIqn"

try {
    # --- 1. portals ----------------------------------------------------------------
    # The destination rule: loopback and link-local portals never reach the initiator.
    Expect-Code (Rpc iscsi v1alpha2 AddTargetPortal @{ target_portal = @{ target_address = '127.0.0.1' } }) 3 'is a loopback address' `
        'AddTargetPortal 127.0.0.1 is INVALID_ARGUMENT (loopback)' | Out-Null
    Expect-Code (Rpc iscsi v1alpha2 AddTargetPortal @{ target_portal = @{ target_address = '169.254.169.254'; target_port = 80 } }) 3 'is a link-local address' `
        'AddTargetPortal 169.254.169.254:80 is INVALID_ARGUMENT (link-local)' | Out-Null
    # A spelling Windows' parsers may read as different addresses is refused as such.
    Expect-Code (Rpc iscsi v1alpha2 AddTargetPortal @{ target_portal = @{ target_address = '::ffff:010.0.0.5' } }) 3 'may read differently' `
        'AddTargetPortal ::ffff:010.0.0.5 is INVALID_ARGUMENT (an ambiguous spelling)' | Out-Null
    Check (@(Get-IscsiTargetPortal | Where-Object { $_.TargetPortalAddress -in '127.0.0.1', '169.254.169.254' }).Count -eq 0) `
        'neither refused portal was registered with the initiator'
    Claim 'README verification table, iscsi AddTargetPortal / ListTargetPortals: port 0 is 3260, idempotent'
    for ($i = 0; $i -lt 2; $i++) {
        Expect-Ok (Rpc iscsi v1alpha2 AddTargetPortal @{ target_portal = $portal }) "AddTargetPortal $portalIp port 0 (call $($i + 1))" | Out-Null
    }
    $tp = @(Get-IscsiTargetPortal | Where-Object { $_.TargetPortalAddress -eq $portalIp })
    Check ($tp.Count -eq 1 -and $tp[0].TargetPortalPortNumber -eq 3260) "Get-IscsiTargetPortal: ${portalIp}:3260, once"
    $l = Expect-Ok (Rpc iscsi v1alpha1 ListTargetPortals) 'ListTargetPortals'
    Check (@($l.Json.target_portals | Where-Object { $_.target_address -eq $portalIp -and $_.target_port -eq 3260 }).Count -eq 1) `
        "ListTargetPortals lists ${portalIp}:3260 once" $l.Out

    # --- 2. discovery --------------------------------------------------------------
    Claim 'README verification table, iscsi DiscoverTargetPortal: the portal''s IQNs, an unregistered portal NOT_FOUND'
    $d = Expect-Ok (Rpc iscsi v1alpha2 DiscoverTargetPortal @{ target_portal = $portal }) 'DiscoverTargetPortal'
    $iqns = @($d.Json.iqns)
    Check (($iqns -contains $plainIqn) -and ($iqns -contains $chapIqn)) 'DiscoverTargetPortal lists both targets' $d.Out
    Expect-Code (Rpc iscsi v1alpha2 DiscoverTargetPortal @{ target_portal = @{ target_address = '10.255.255.1' } }) 5 'is not registered' `
        'DiscoverTargetPortal of a portal not registered is NOT_FOUND' | Out-Null

    # --- 3. a target without authentication ----------------------------------------------
    Claim 'README verification table, iscsi ConnectTarget / GetTargetDisks: idempotent, disk numbers as decimal strings'
    for ($i = 0; $i -lt 2; $i++) {
        Expect-Ok (Rpc iscsi v1alpha2 ConnectTarget @{ target_portal = $portal; iqn = $plainIqn; auth_type = 'NONE' }) "ConnectTarget plain (call $($i + 1))" | Out-Null
    }
    $s = @(Get-IscsiSession | Where-Object { $_.TargetNodeAddress -eq $plainIqn })
    Check ($s.Count -eq 1) 'Get-IscsiSession: one session to the plain target'
    Check ($s.Count -ge 1 -and -not $s[0].IsPersistent) 'the login is not persistent (as upstream: no -IsPersistent)'
    $pl = @(Get-CimInstance -Namespace root\wmi -ClassName MSiSCSIInitiator_PersistentLoginClass -ErrorAction SilentlyContinue |
            Where-Object { $_.TargetName -eq $plainIqn })
    Check ($pl.Count -eq 0) 'no persistent login of the plain target (it would log back in at boot)'
    $want = @($s | Get-Disk | ForEach-Object { "$($_.Number)" })
    $g = Expect-Ok (Rpc iscsi v1alpha2 GetTargetDisks @{ target_portal = $portal; iqn = $plainIqn }) 'GetTargetDisks plain'
    $got = @($g.Json.diskIDs)
    Check (($got.Count -eq 1) -and (-not (Compare-Object $got $want))) "GetTargetDisks = Get-Disk's numbers ($($want -join ','))" $g.Out

    # --- 4. CHAP ---------------------------------------------------------------------------
    Claim 'README verification table, iscsi ConnectTarget with CHAP: a wrong secret PERMISSION_DENIED; SetMutualChapSecret 12-16 bytes'
    $bad = Rpc iscsi v1alpha2 ConnectTarget @{ target_portal = $portal; iqn = $chapIqn; auth_type = 'ONE_WAY_CHAP'; chap_username = $chapUser; chap_secret = $wrongSecret }
    Expect-Code $bad 7 'ISDSC_AUTHENTICATION_FAILURE' 'ConnectTarget with a wrong CHAP secret is PERMISSION_DENIED' | Out-Null
    Check (-not ($bad.Out -like "*$wrongSecret*")) 'the refusal does not carry the secret'
    $pl = @(Get-CimInstance -Namespace root\wmi -ClassName MSiSCSIInitiator_PersistentLoginClass -ErrorAction SilentlyContinue |
            Where-Object { $_.TargetName -eq $chapIqn })
    Check ($pl.Count -eq 0) 'the refused login left no persistent login'
    Expect-Ok (Rpc iscsi v1alpha2 ConnectTarget @{ target_portal = $portal; iqn = $chapIqn; auth_type = 'ONE_WAY_CHAP'; chap_username = $chapUser; chap_secret = $chapSecret }) `
        'ConnectTarget with the right CHAP user and secret' | Out-Null
    $g = Expect-Ok (Rpc iscsi v1alpha1 GetTargetDisks @{ target_portal = $portal; iqn = $chapIqn }) 'GetTargetDisks chap'
    Check (@($g.Json.diskIDs).Count -eq 1) 'the CHAP target has one disk' $g.Out
    Expect-Code (Rpc iscsi v1alpha2 SetMutualChapSecret @{ MutualChapSecret = $shortSecret }) 3 'CHAP' 'SetMutualChapSecret of 9 bytes is INVALID_ARGUMENT' | Out-Null
    Expect-Ok (Rpc iscsi v1alpha2 SetMutualChapSecret @{ MutualChapSecret = $mutualSecret }) 'SetMutualChapSecret of 16 bytes' | Out-Null

    # --- 5. the plain target's disk through the disk and volume groups ----------------------
    Claim 'README "Verification level": the iSCSI disk staged through the disk and volume groups (test_iscsi_flow.py on the sim)'
    $n = [int] $want[0]
    if ((Get-Disk -Number $n).IsOffline) {
        Expect-Ok (Rpc disk v1 SetDiskState @{ disk_number = $n; is_online = $true }) "SetDiskState online (disk $n)" | Out-Null
    }
    Expect-Ok (Rpc disk v1 PartitionDisk @{ disk_number = $n }) "PartitionDisk $n" | Out-Null
    $lv = Expect-Ok (Rpc volume v1 ListVolumesOnDisk @{ disk_number = $n }) 'ListVolumesOnDisk'
    $vol = @($lv.Json.volume_ids)[0]
    Expect-Ok (Rpc volume v1 FormatVolume @{ volume_id = $vol }) 'FormatVolume' | Out-Null
    $target = Join-Path $Kubelet 'plugins\kubernetes.io\csi\pv\csi-proxy-iscsi-test\globalmount'
    New-Item -ItemType Directory -Force -Path $target | Out-Null
    Expect-Ok (Rpc volume v1 MountVolume @{ volume_id = $vol; target_path = $target }) 'MountVolume' | Out-Null
    Set-Content -LiteralPath (Join-Path $target 'hello.txt') -Value 'written through csi-proxy'
    Check ((Get-Content -LiteralPath (Join-Path $target 'hello.txt')) -eq 'written through csi-proxy') 'a file written on the iSCSI volume reads back'
    Expect-Ok (Rpc volume v1 UnmountVolume @{ volume_id = $vol; target_path = $target }) 'UnmountVolume' | Out-Null

    # --- 6. disconnect and remove -----------------------------------------------------------
    # A persistent login as an older csi-proxy made it: DisconnectTarget must remove it,
    # passing RemoveIScsiPersistentTargetW the InitiatorInstance Windows reports.
    $s = @(Get-IscsiSession | Where-Object { $_.TargetNodeAddress -eq $plainIqn })
    if ($s.Count -ge 1) { Register-IscsiSession -SessionIdentifier $s[0].SessionIdentifier | Out-Null }
    $pl = @(Get-CimInstance -Namespace root\wmi -ClassName MSiSCSIInitiator_PersistentLoginClass -ErrorAction SilentlyContinue |
            Where-Object { $_.TargetName -eq $plainIqn })
    Check ($pl.Count -ge 1) 'Register-IscsiSession made a persistent login of the plain target (the old behaviour)'
    foreach ($p in $pl) { Write-Output "# persistent login reported with InitiatorInstance '$($p.InitiatorInstance)'" }
    Claim 'README verification table, iscsi DisconnectTarget / RemoveTargetPortal: a second disconnect OK, a second remove NOT_FOUND'
    foreach ($iqn in $plainIqn, $chapIqn) {
        for ($i = 0; $i -lt 2; $i++) {
            Expect-Ok (Rpc iscsi v1alpha2 DisconnectTarget @{ target_portal = $portal; iqn = $iqn }) "DisconnectTarget $iqn (call $($i + 1))" | Out-Null
        }
        Check (@(Get-IscsiSession | Where-Object { $_.TargetNodeAddress -eq $iqn }).Count -eq 0) "no session to $iqn"
        $pl = @(Get-CimInstance -Namespace root\wmi -ClassName MSiSCSIInitiator_PersistentLoginClass -ErrorAction SilentlyContinue |
                Where-Object { $_.TargetName -eq $iqn })
        Check ($pl.Count -eq 0) "no persistent login of $iqn"
        $g = Expect-Ok (Rpc iscsi v1alpha2 GetTargetDisks @{ target_portal = $portal; iqn = $iqn }) "GetTargetDisks $iqn after disconnect"
        Check (@(Prop $g.Json 'diskIDs').Count -eq 0) '... is empty' $g.Out
    }
    Expect-Ok (Rpc iscsi v1alpha2 RemoveTargetPortal @{ target_portal = $portal }) 'RemoveTargetPortal' | Out-Null
    Check (@(Get-IscsiTargetPortal | Where-Object { $_.TargetPortalAddress -eq $portalIp }).Count -eq 0) 'Get-IscsiTargetPortal: gone'
    Expect-Code (Rpc iscsi v1alpha1 RemoveTargetPortal @{ target_portal = $portal }) 5 'is not registered' 'RemoveTargetPortal again is NOT_FOUND' | Out-Null

    # --- 7. the initiator service stopped ----------------------------------------------------
    Claim 'README verification table, iscsi ListTargetPortals: MSiSCSI stopped is FAILED_PRECONDITION naming the service'
    Stop-Service MSiSCSI -Force
    $r = Rpc iscsi v1alpha2 ListTargetPortals
    Write-Output "# with MSiSCSI stopped, the API answered: $($r.Out)"
    Expect-Code $r 9 'MSiSCSI' 'with MSiSCSI stopped, ListTargetPortals is FAILED_PRECONDITION naming the service' | Out-Null
    # The standard health service follows the initiator: NOT_SERVING while
    # MSiSCSI is stopped, SERVING once it runs (csi-proxy-cli health asks
    # grpc.health.v1.Health/Check; -serving counts NOT_SERVING as down).
    $h = Invoke-Native $Cli @('health', '-serving', '-deadline', '3s', 'iscsi')
    Check (($h.Code -eq 1) -and ($h.Text -match 'iscsi v1alpha2 FAIL: NOT_SERVING')) 'health -serving: the iscsi pipes NOT_SERVING while MSiSCSI is stopped' $h.Text
    Start-Service MSiSCSI
    Expect-Ok (Rpc iscsi v1alpha2 ListTargetPortals) 'ListTargetPortals after MSiSCSI is started again' | Out-Null
    $h = Invoke-Native $Cli @('health', '-serving', '-deadline', '10s', 'iscsi')
    Check (($h.Code -eq 0) -and ($h.Text -notmatch 'NOT_SERVING')) 'health -serving: the iscsi pipes SERVING once MSiSCSI runs' $h.Text
} finally {
    Start-Service MSiSCSI -ErrorAction SilentlyContinue
    foreach ($iqn in $plainIqn, $chapIqn) {
        Get-IscsiSession -ErrorAction SilentlyContinue | Where-Object { $_.TargetNodeAddress -eq $iqn } |
            ForEach-Object { Unregister-IscsiSession -SessionIdentifier $_.SessionIdentifier -ErrorAction SilentlyContinue
                             Disconnect-IscsiTarget -SessionIdentifier $_.SessionIdentifier -Confirm:$false -ErrorAction SilentlyContinue }
    }
    Remove-IscsiTargetPortal -TargetPortalAddress $portalIp -Confirm:$false -ErrorAction SilentlyContinue
    Remove-IscsiServerTarget -TargetName csiproxy-plain -ErrorAction SilentlyContinue
    Remove-IscsiServerTarget -TargetName csiproxy-chap -ErrorAction SilentlyContinue
    Remove-IscsiVirtualDisk -Path $plainVhd -ErrorAction SilentlyContinue
    Remove-IscsiVirtualDisk -Path $chapVhd -ErrorAction SilentlyContinue
    Remove-Item -Force $plainVhd, $chapVhd -ErrorAction SilentlyContinue
}

# --- 8. no CHAP secret in the service's log or audit ------------------------------------------
Claim 'README "Security model" 4, no secrets anywhere: CHAP secrets in no log and <redacted> in the audit'
foreach ($f in $ServiceLog) {
    if (Test-Path -LiteralPath $f) {
        foreach ($secret in $chapSecret, $wrongSecret, $mutualSecret, $shortSecret) {
            $hit = Select-String -LiteralPath $f -SimpleMatch -Pattern $secret -Quiet
            Check (-not $hit) "a CHAP secret ($($secret.Length) bytes) is not in $f"
        }
    } else {
        Bad "no CHAP secret in $f" 'no such file'
    }
}

Complete-Tests
