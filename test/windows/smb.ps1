<#
.SYNOPSIS
  The smb group of csi-proxy on a real Windows node: SMB global mappings
  through MSFT_SmbGlobalMapping (winapi/smb_win32.c). A share of the node
  itself is refused; a share on another host, with credentials, is mapped,
  linked under the kubelet directory, read and written through the link, and
  removed. See README.md in this directory. NOT RUN by the team yet.
.EXAMPLE
  $cred = Get-Credential   # an account the file server accepts
  .\smb.ps1 -Cli C:\csi-test\csi-proxy-cli.exe -RemotePath \\fs1.example.com\share -Credential $cred `
      -ServiceLog C:\csi-test\csi-proxy.log
#>
param(
    [Parameter(Mandatory = $true)] [string] $Cli,
    # A share on ANOTHER host (not this node), that -Credential may write to.
    [Parameter(Mandatory = $true)] [string] $RemotePath,
    [Parameter(Mandatory = $true)] [pscredential] $Credential,
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

$script:pass = 0
$script:fail = 0
function Ok([string] $name) { $script:pass++; Write-Output "ok - $name" }
function Bad([string] $name, [string] $why) { $script:fail++; Write-Output "not ok - $name"; if ($why) { Write-Output "    $why" } }
function Check([bool] $cond, [string] $name, [string] $why = '') { if ($cond) { Ok $name } else { Bad $name $why } }

# The request goes through a file (@file): PowerShell 5.1 mangles double
# quotes in native command arguments. The file holds the password while the
# call runs and is deleted at once.
$reqFile = Join-Path $env:TEMP 'csi-proxy-smb-rpc.json'
function Rpc([string] $Method, $Body) {
    [IO.File]::WriteAllText($reqFile, ($Body | ConvertTo-Json -Compress -Depth 4))
    try {
        $out = @(& $Cli smb v1 $Method "@$reqFile" 2>&1 | ForEach-Object { "$_" })
    } finally {
        Remove-Item -Force $reqFile -ErrorAction SilentlyContinue
    }
    [pscustomobject]@{ Code = $LASTEXITCODE; Out = ($out -join ' | ') }
}
function Expect-Code($r, [int] $code, [string] $text, [string] $name) {
    Check (($r.Code -eq $code) -and ($r.Out -like "*$text*")) $name "exit $($r.Code), want $code with '$text': $($r.Out)"
}
function Mapping([string] $path) { # Windows' own view, not the service's
    @(Get-SmbGlobalMapping -ErrorAction SilentlyContinue | Where-Object { $_.RemotePath -eq $path })
}

$user = $Credential.UserName
$pass = $Credential.GetNetworkCredential().Password
$root = ($RemotePath -replace '/', '\').TrimEnd('\')
$server = $root.Split('\')[2]
if ($server -in @('localhost', '127.0.0.1', '::1', $env:COMPUTERNAME) -or
    $server -like "$env:COMPUTERNAME.*") {
    throw "-RemotePath must be a share on another host, not $server"
}
if ((Mapping $root).Count -gt 0) { throw "$root is already globally mapped on this node; remove it first" }

# --- 1. shares of the node itself are refused before Windows is asked -------
# (by name, by any spelling Windows reads as this machine, by its own
# addresses; administrative shares of any server)
foreach ($own in @("\\localhost\c`$", "\\127.0.0.1\share", "\\$env:COMPUTERNAME\ADMIN`$", "\\$env:COMPUTERNAME\share")) {
    $r = Rpc 'NewSmbGlobalMapping' @{ remote_path = $own; username = $user; password = $pass }
    Expect-Code $r 3 'is this machine' "a share of this node ($own) is INVALID_ARGUMENT"
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
if ($null -ne $item) {
    $target = @($item.Target)[0]
    Check ($target.TrimEnd('\') -ieq $root) "the link points at $root" "$target"
}

# idempotent: a second call with the same share succeeds and keeps one mapping
$r = Rpc 'NewSmbGlobalMapping' @{ remote_path = $RemotePath; local_path = $link; username = $user; password = $pass }
Check ($r.Code -eq 0) 'NewSmbGlobalMapping again succeeds' $r.Out
Check ((Mapping $root).Count -eq 1) 'still one mapping'

# --- 3. read and write through the link --------------------------------------
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

# --- 4. the credential-conflict refusal (optional) ---------------------------
if ($OtherRemotePath -and $null -ne $OtherCredential) {
    $r = Rpc 'NewSmbGlobalMapping' @{ remote_path = $OtherRemotePath; username = $OtherCredential.UserName; password = $OtherCredential.GetNetworkCredential().Password }
    $otherRoot = ($OtherRemotePath -replace '/', '\').TrimEnd('\').ToLowerInvariant()
    Expect-Code $r 9 $otherRoot 'other credentials for the same server are FAILED_PRECONDITION naming the share'
    Check ($r.Out -like '*ERROR_SESSION_CREDENTIAL_CONFLICT*') '... and saying why (ERROR_SESSION_CREDENTIAL_CONFLICT)' $r.Out
    Check ($r.Out -notlike "*$($OtherCredential.GetNetworkCredential().Password)*") '... without the password' 'password in the error text'
} else {
    Write-Output '# skipped: the credential-conflict case (give -OtherRemotePath and -OtherCredential)'
}

# --- 5. removal -------------------------------------------------------------
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
foreach ($f in $ServiceLog) {
    if (Test-Path -LiteralPath $f) {
        $hit = Select-String -LiteralPath $f -SimpleMatch -Pattern $pass -Quiet
        Check (-not $hit) "the password is not in $f"
    } else {
        Bad "the password is not in $f" 'no such file'
    }
}

Write-Output "$script:pass passed, $script:fail failed"
if ($script:fail -gt 0) { exit 1 }
