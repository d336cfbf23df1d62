<#
.SYNOPSIS
  The smb group of csi-proxy on a real Windows node: SMB global mappings
  through MSFT_SmbGlobalMapping (host/smb_win.c). A share of the node
  itself is refused; a share on another host, with credentials, is mapped,
  linked under the kubelet directory, read and written through the link, and
  removed. See README.md in this directory. NOT RUN by the team yet.
.EXAMPLE
  .\smb.ps1 -Cli C:\csi-test\csi-proxy-cli.exe -SelfShare   # with allowedServers: [<this computer>]
.EXAMPLE
  $cred = Get-Credential   # an account the file server accepts
  .\smb.ps1 -Cli C:\csi-test\csi-proxy-cli.exe -RemotePath \\fs1.example.com\share -Credential $cred `
      -ServiceLog C:\csi-test\csi-proxy.log
#>
param(
    [Parameter(Mandatory = $true)] [string] $Cli,
    # A share on ANOTHER host (not this node), that -Credential may write to.
    [string] $RemotePath = '',
    [pscredential] $Credential = $null,
    # Instead of -RemotePath: make two shares of THIS machine, each with a
    # local user of its own, and map those. The service must then run with
    # this machine's name in groups.smb.allowedServers (run-all.ps1's test
    # configuration does); everything is removed at the end.
    [switch] $SelfShare,
    [string] $Kubelet = 'C:\var\lib\kubelet',
    # Optional: the service's log (its stderr redirected to a file) and audit
    # file, searched for the password after the run.
    [string[]] $ServiceLog = @(),
    # Optional: another share of the SAME server and other valid credentials
    # for it, to see Windows' "multiple connections to a server by the same
    # user" refusal (ERROR_SESSION_CREDENTIAL_CONFLICT) answered as
    # FAILED_PRECONDITION naming the share.
    [string] $OtherRemotePath = '',
    [pscredential] $OtherCredential = $null
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

# The request goes through a file (@file): PowerShell 5.1 mangles double
# quotes in native command arguments. The file holds the password while the
# call runs and is deleted at once.
$reqFile = Join-Path $env:TEMP 'csi-proxy-smb-rpc.json'
function Rpc([string] $Method, $Body) {
    [IO.File]::WriteAllText($reqFile, ($Body | ConvertTo-Json -Compress -Depth 4))
    try {
        $r = Invoke-Native $Cli @('smb', 'v1', $Method, "@$reqFile")
    } finally {
        Remove-Item -Force $reqFile -ErrorAction SilentlyContinue
    }
    [pscustomobject]@{ Code = $r.Code; Out = ($r.Out -join ' | ') }
}
function Expect-Code($r, [int] $code, [string] $text, [string] $name) {
    Check (($r.Code -eq $code) -and ($r.Out -like "*$text*")) $name "exit $($r.Code), want $code with '$text': $($r.Out)"
}
function Mapping([string] $path) { # Windows' own view, not the service's
    @(Get-SmbGlobalMapping -ErrorAction SilentlyContinue | Where-Object { $_.RemotePath -eq $path })
}

$selfMade = @()
if ($SelfShare) {
    # Two local users and two shares of this machine (as upstream's
    # integration test does for its one share), removed at the end.
    foreach ($k in 1, 2) {
        $u = "csismb$k" + (Get-Random -Maximum 99999)
        $pw = 'Pw-' + [guid]::NewGuid().ToString('N').Substring(0, 16) + '!'
        $sec = ConvertTo-SecureString $pw -AsPlainText -Force
        New-LocalUser -Name $u -Password $sec -PasswordNeverExpires | Out-Null
        $dir = Join-Path $env:SystemDrive "csi-proxy-smb-share-$u"
        New-Item -ItemType Directory -Force $dir | Out-Null
        New-SmbShare -Name $u -Path $dir -FullAccess "$env:COMPUTERNAME\$u" | Out-Null
        $acl = Get-Acl $dir
        $acl.AddAccessRule((New-Object Security.AccessControl.FileSystemAccessRule("$env:COMPUTERNAME\$u", 'FullControl', 'ContainerInherit,ObjectInherit', 'None', 'Allow')))
        Set-Acl $dir $acl
        $selfMade += [pscustomobject]@{ User = $u; Dir = $dir; Path = "\\$env:COMPUTERNAME\$u"; Cred = (New-Object pscredential("$env:COMPUTERNAME\$u", $sec)) }
    }
    $RemotePath = $selfMade[0].Path; $Credential = $selfMade[0].Cred
    $OtherRemotePath = $selfMade[1].Path; $OtherCredential = $selfMade[1].Cred
} elseif (-not $RemotePath -or $null -eq $Credential) {
    throw 'give -RemotePath and -Credential (a share on another host), or -SelfShare'
}
function Remove-SelfShares {
    foreach ($m in $selfMade) {
        Remove-SmbShare -Name $m.User -Force -ErrorAction SilentlyContinue
        Remove-LocalUser -Name $m.User -ErrorAction SilentlyContinue
        Remove-Item -Recurse -Force $m.Dir -ErrorAction SilentlyContinue
    }
}

$user = $Credential.UserName
$pass = $Credential.GetNetworkCredential().Password
$root = ($RemotePath -replace '/', '\').TrimEnd('\')
$server = $root.Split('\')[2]
$isSelf = $server -in @('localhost', '127.0.0.1', '::1', $env:COMPUTERNAME) -or $server -like "$env:COMPUTERNAME.*"
if ($isSelf -and -not $SelfShare) {
    throw "-RemotePath must be a share on another host, not $server (or use -SelfShare)"
}
if ((Mapping $root).Count -gt 0) { throw "$root is already globally mapped on this node; remove it first" }

# --- 1. shares of the node itself are refused before Windows is asked -------
Claim 'README "Security model" / configuration table groups.smb.allowedServers: a share of this machine is INVALID_ARGUMENT unless its server is named'
$own = @("\\localhost\c`$", "\\127.0.0.1\share")
if (-not $SelfShare) { $own += @("\\$env:COMPUTERNAME\ADMIN`$", "\\$env:COMPUTERNAME\share") }
foreach ($o in $own) {
    $r = Rpc 'NewSmbGlobalMapping' @{ remote_path = $o; username = $user; password = $pass }
    Expect-Code $r 3 'is this machine' "a share of this node ($o) is INVALID_ARGUMENT"
}
if ($SelfShare) {
    # allowedServers names this machine exactly: its other names stay refused
    # (above), and a server the list does not name is refused too.
    $r = Rpc 'NewSmbGlobalMapping' @{ remote_path = '\\not-listed.example.com\share'; username = $user; password = $pass }
    Expect-Code $r 3 'is not in groups.smb.allowedServers' 'a server groups.smb.allowedServers does not name is INVALID_ARGUMENT'
}
# Windows reads these as this machine too (inet_addr's non-strict IPv4
# forms, the ipv6-literal.net spelling of ::1, trailing dots and spaces
# dropped from a share name): each is refused.
$spellings = @("\\0x7f.1\share", "\\0x7f000001\share", "\\2130706433\share", "\\017700000001\share",
    "\\0177.0.0.1\share", "\\0\share", "\\0.0\share", "\\0-0-0-0-0-0-0-1.ipv6-literal.net\share",
    "\\0000-0000-0000-0000-0000-0000-0000-0001.ipv6-literal.net\share")
foreach ($own in $spellings) {
    $r = Rpc 'NewSmbGlobalMapping' @{ remote_path = $own; username = $user; password = $pass }
    Expect-Code $r 3 'is this machine' "this node spelled $own is INVALID_ARGUMENT"
}
# (informational) what Windows itself does with one of those spellings
Write-Output "# Windows resolves \\0x7f.1\C`$ to this node: $(Test-Path -LiteralPath "\\0x7f.1\C`$" -ErrorAction SilentlyContinue)"
# A literal-net scope of any text is dropped (this machine); spellings
# Windows' parsers may read as different addresses (a group of more than 4
# digits, "::" beside 8 groups, an octal IPv4 tail part) are refused as such.
$r = Rpc 'NewSmbGlobalMapping' @{ remote_path = "\\0--1s-x.ipv6-literal.net\share"; username = $user; password = $pass }
Expect-Code $r 3 'is this machine' "\\0--1s-x.ipv6-literal.net\share is INVALID_ARGUMENT (this machine)"
foreach ($odd in @("\\0--00001.ipv6-literal.net\share", "\\0-0-0-0--0-0-0-1.ipv6-literal.net\share",
        "\\0--ffff-0177.0.0.1.ipv6-literal.net\share")) {
    $r = Rpc 'NewSmbGlobalMapping' @{ remote_path = $odd; username = $user; password = $pass }
    Expect-Code $r 3 'may read differently' "$odd is INVALID_ARGUMENT (an ambiguous spelling)"
}
# (informational) which reading Windows itself takes of those spellings:
# True means it reached this node's C$ through it
foreach ($odd in @("0--1s-x", "0--00001", "0-0-0-0--0-0-0-1", "0--ffff-0177.0.0.1")) {
    Write-Output "# Windows reaches \\$odd.ipv6-literal.net\C`$ on this node: $(Test-Path -LiteralPath "\\$odd.ipv6-literal.net\C`$" -ErrorAction SilentlyContinue)"
}
$srv = $server
foreach ($share in @('C$.', 'C$ ', 'ADMIN$.', 'IPC$.', 'print$ ')) {
    $r = Rpc 'NewSmbGlobalMapping' @{ remote_path = "\\$srv\$share"; username = $user; password = $pass }
    Expect-Code $r 3 'administrative share' "\\$srv\$share (an administrative share once Windows trims it) is INVALID_ARGUMENT"
}

# The node's own addresses (GetAdaptersAddresses in the service; here
# Get-NetIPAddress), every adapter, IPv4 and IPv6, in their plain and UNC
# spellings: each is this machine.
$addrs = @(Get-NetIPAddress -ErrorAction SilentlyContinue | Where-Object { $_.IPAddress -notlike '127.*' -and $_.IPAddress -ne '::1' })
Check ($addrs.Count -gt 0) 'Get-NetIPAddress lists this node''s addresses' 'none listed'
foreach ($a in $addrs) {
    $ip = "$($a.IPAddress)"
    if ($ip -like '*:*') {
        $parts = $ip.Split('%')
        $names = @(($parts[0] -replace ':', '-') + $(if ($parts.Count -gt 1) { "s$($parts[1])" } else { '' }) + '.ipv6-literal.net')
    } else {
        $o = $ip.Split('.') | ForEach-Object { [uint32]$_ }
        $names = @($ip, "$(($o[0] * 16777216) + ($o[1] * 65536) + ($o[2] * 256) + $o[3])")
    }
    foreach ($n in $names) {
        $r = Rpc 'NewSmbGlobalMapping' @{ remote_path = "\\$n\share"; username = $user; password = $pass }
        Expect-Code $r 3 'is this machine' "this node's own address $ip, as \\$n\share, is INVALID_ARGUMENT"
        $r = Rpc 'RemoveSmbGlobalMapping' @{ remote_path = "\$n\share" }
        Expect-Code $r 3 'is this machine' "... and RemoveSmbGlobalMapping of \$n\share (one backslash) too"
    }
}
Check ((@(Get-SmbGlobalMapping -ErrorAction SilentlyContinue | Where-Object { $_.RemotePath -like "\\localhost\*" -or $_.RemotePath -like "\\$env:COMPUTERNAME\*" })).Count -eq 0) `
    'no global mapping of the node itself exists afterwards'

# --- 2. a share on another host: mapped and linked ---------------------------
Claim 'README verification table, smb NewSmbGlobalMapping: mapped (RequirePrivacy from -require-privacy), linked under the kubelet directory, idempotent'
$podDir = Join-Path $Kubelet 'pods\csi-proxy-smb-test\volumes\kubernetes.io~csi\pv-smb'
$link = Join-Path $podDir 'mount'
New-Item -ItemType Directory -Force $podDir | Out-Null
$r = Rpc 'NewSmbGlobalMapping' @{ remote_path = $RemotePath; local_path = $link; username = $user; password = $pass }
Check ($r.Code -eq 0) "NewSmbGlobalMapping $RemotePath with credentials" $r.Out
$m = Mapping $root
Check ($m.Count -eq 1) 'Get-SmbGlobalMapping shows the mapping' "$($m.Count) mappings"
if ($m.Count -eq 1) {
    Check ("$($m[0].Status)" -eq 'OK') 'its Status is OK' "$($m[0].Status)"
    Check ($m[0].RequirePrivacy -eq $true) 'RequirePrivacy is on (the -require-privacy default)' "$($m[0].RequirePrivacy)"
}
$item = Get-Item -Force $link -ErrorAction SilentlyContinue
Check ($null -ne $item -and "$($item.LinkType)" -eq 'SymbolicLink') 'local_path is a directory symbolic link' "$($item | Format-List * | Out-String)"
# Always a directory link, as upstream makes it: never a file link because
# the share did not answer at the moment the link was made.
Check ($null -ne $item -and ($item.Attributes -band [IO.FileAttributes]::Directory)) `
    '... with the Directory attribute (a directory link, not a file link)' "$($item.Attributes)"
if ($null -ne $item) {
    $target = @($item.Target)[0]
    Check ($target.TrimEnd('\') -ieq $root) "the link points at $root" "$target"
}

# idempotent: a second call with the same share succeeds and keeps one mapping
$r = Rpc 'NewSmbGlobalMapping' @{ remote_path = $RemotePath; local_path = $link; username = $user; password = $pass }
Check ($r.Code -eq 0) 'NewSmbGlobalMapping again succeeds' $r.Out
Check ((Mapping $root).Count -eq 1) 'still one mapping'

# --- 3. read and write through the link --------------------------------------
Claim 'DRIVER-CONTRACTS section 9 fact 24 (csi-driver-smb): the directory link leads to the share'
$name = "csi-proxy-smb-test-$([guid]::NewGuid().ToString('N')).txt"
$text = "written through the link at $(Get-Date -Format o)"
try {
    Set-Content -LiteralPath (Join-Path $link $name) -Value $text -Encoding UTF8
    $back = Get-Content -LiteralPath (Join-Path $root $name) -Raw -Encoding UTF8
    Check ($back.Trim() -eq $text) 'a file written through the link is on the share' "read back: $back"
    Add-Content -LiteralPath (Join-Path $root $name) -Value 'second line' -Encoding UTF8
    $back = Get-Content -LiteralPath (Join-Path $link $name) -Encoding UTF8
    Check ($back[-1] -eq 'second line') 'a change on the share is read through the link' "$back"
    Remove-Item -LiteralPath (Join-Path $link $name)
    Check (-not (Test-Path -LiteralPath (Join-Path $root $name))) 'a file deleted through the link is gone from the share'
} catch {
    Bad 'read and write through the link' "$_"
}

# --- 3b. the share's stats through the volume group ---------------------------
# csi-driver-smb and NetApp Trident link the pod path to the staging link
# (CreateSymlink whose source leads to the share), and Trident reads stats by
# GetVolumeIDFromTargetPath of the pod path, then GetVolumeStats of that ID
# (DRIVER-CONTRACTS facts 31, 36, 37). Wine cannot show it: its
# CreateSymbolicLinkW is a stub and it has no reparse data to read
# (FSCTL_GET_REPARSE_POINT, host/fs_link_win.c), nor a share to ask
# GetDiskFreeSpaceExW about (host/smb_win.c).
Claim 'docs/compatibility.md, SMB volume stats: the share ID "\\?\UNC\server\share\" and GetDiskFreeSpaceExW of the share root'
function RpcG([string] $Group, [string] $Method, $Body) {
    [IO.File]::WriteAllText($reqFile, ($Body | ConvertTo-Json -Compress -Depth 4))
    try {
        $r = Invoke-Native $Cli @($Group, 'v1', $Method, "@$reqFile")
    } finally {
        Remove-Item -Force $reqFile -ErrorAction SilentlyContinue
    }
    $json = @($r.Out | Where-Object { "$_".StartsWith('{') }) | Select-Object -First 1
    [pscustomobject]@{ Code = $r.Code; Out = ($r.Out -join ' | '); Body = $(if ($json) { $json | ConvertFrom-Json } else { $null }) }
}
Add-Type -Namespace CsiProxyTest -Name Disk -MemberDefinition @'
[DllImport("kernel32.dll", CharSet = CharSet.Unicode, SetLastError = true)]
public static extern bool GetDiskFreeSpaceExW(string dir, out ulong avail, out ulong total, out ulong free);
'@
$podLink = Join-Path $Kubelet 'pods\csi-proxy-smb-test\volumes\kubernetes.io~csi\pv-smb-pod\mount'
New-Item -ItemType Directory -Force (Split-Path $podLink) | Out-Null
$r = RpcG 'filesystem' 'CreateSymlink' @{ source_path = $link; target_path = $podLink }
Check ($r.Code -eq 0) 'CreateSymlink from the SMB staging link to a pod path (csi-driver-smb and Trident publish)' $r.Out
$shareId = '\\?\UNC\' + $root.TrimStart('\').ToLowerInvariant() + '\'
$r = RpcG 'volume' 'GetVolumeIDFromTargetPath' @{ target_path = $podLink }
Check ($r.Code -eq 0 -and $null -ne $r.Body -and $r.Body.volume_id -eq $shareId) "GetVolumeIDFromTargetPath of the pod path answers $shareId" $r.Out
$r = RpcG 'volume' 'GetVolumeIDFromTargetPath' @{ target_path = $link }
Check ($r.Code -eq 0 -and $null -ne $r.Body -and $r.Body.volume_id -eq $shareId) '... and of the staging link' $r.Out
$avail = [uint64]0; $total = [uint64]0; $free = [uint64]0
$ok = [CsiProxyTest.Disk]::GetDiskFreeSpaceExW($root + '\', [ref] $avail, [ref] $total, [ref] $free)
$r = RpcG 'volume' 'GetVolumeStats' @{ volume_id = $shareId }
if ($ok -and $r.Code -eq 0 -and $null -ne $r.Body) {
    Check ([uint64]$r.Body.total_bytes -eq $total) "GetVolumeStats total_bytes is the share's size ($total)" $r.Out
    $used = [uint64]$r.Body.used_bytes
    # the share is live: allow for other writers between the two reads (1 GiB)
    Check ([math]::Abs([double]$used - [double]($total - $free)) -lt 1GB) "used_bytes is size - free ($($total - $free))" $r.Out
} else {
    Bad 'GetVolumeStats of the share ID' "GetDiskFreeSpaceExW ok=$ok; $($r.Out)"
}
$r = RpcG 'volume' 'GetDiskNumberFromVolumeID' @{ volume_id = $shareId }
Check ($r.Code -eq 3 -and $r.Out -like "*SMB share*") 'GetDiskNumberFromVolumeID of the share ID is INVALID_ARGUMENT naming it' $r.Out
$r = RpcG 'filesystem' 'Rmdir' @{ path = $podLink; force = $true }
Check ($r.Code -eq 0 -and (Test-Path -LiteralPath $root)) 'Rmdir(force) of the pod link leaves the share' $r.Out

# --- 4. the credential-conflict refusal (optional) ---------------------------
Claim 'README "Verification level", smb: other credentials for the same server FAILED_PRECONDITION naming the share'
if ($OtherRemotePath -and $null -ne $OtherCredential) {
    $r = Rpc 'NewSmbGlobalMapping' @{ remote_path = $OtherRemotePath; username = $OtherCredential.UserName; password = $OtherCredential.GetNetworkCredential().Password }
    $otherRoot = ($OtherRemotePath -replace '/', '\').TrimEnd('\').ToLowerInvariant()
    Expect-Code $r 9 $otherRoot 'other credentials for the same server are FAILED_PRECONDITION naming the share'
    Check ($r.Out -like '*ERROR_SESSION_CREDENTIAL_CONFLICT*') '... and saying why (ERROR_SESSION_CREDENTIAL_CONFLICT)' $r.Out
    Check ($r.Out -notlike "*$($OtherCredential.GetNetworkCredential().Password)*") '... without the password' 'password in the error text'
} else {
    Skip 'other credentials for the same server are FAILED_PRECONDITION' 'give -OtherRemotePath and -OtherCredential, or -SelfShare'
}

# --- 5. removal -------------------------------------------------------------
Claim 'README "Verification level", smb RemoveSmbGlobalMapping: a mapping already gone succeeds (DRIVER-CONTRACTS Q5)'
Remove-Item -Force $link -ErrorAction SilentlyContinue # the driver removes its link (rmdir on the link only)
Check (Test-Path -LiteralPath $root) 'removing the link left the share intact'
# NetApp Trident's unstage: one leading backslash ("\" + server + path in
# its Go source), the root read from the first two components as upstream does
$tridentPath = '\' + $root.TrimStart('\') + '\trident_pvc_x'
$r = Rpc 'RemoveSmbGlobalMapping' @{ remote_path = $tridentPath }
Check ($r.Code -eq 0) "RemoveSmbGlobalMapping $tridentPath (one leading backslash, as Trident)" $r.Out
Check ((Mapping $root).Count -eq 0) 'Get-SmbGlobalMapping no longer shows it'
$r = Rpc 'RemoveSmbGlobalMapping' @{ remote_path = $RemotePath }
Check ($r.Code -eq 0) 'RemoveSmbGlobalMapping of a mapping already gone succeeds' $r.Out
Remove-Item -Recurse -Force (Join-Path $Kubelet 'pods\csi-proxy-smb-test') -ErrorAction SilentlyContinue

# --- 6. the password is nowhere in the service's log or audit ----------------
Claim 'README "Security model" 4, no secrets anywhere: the SMB password in no log'
foreach ($f in $ServiceLog) {
    if (Test-Path -LiteralPath $f) {
        $hit = Select-String -LiteralPath $f -SimpleMatch -Pattern $pass -Quiet
        Check (-not $hit) "the password is not in $f"
    } else {
        Bad "the password is not in $f" 'no such file'
    }
}

Remove-SelfShares
Complete-Tests
