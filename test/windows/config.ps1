<#
.SYNOPSIS
  csi-proxy's configuration file, roots and log sinks on a real Windows node:
  what Wine cannot show. Status: written, reviewed, NOT RUN by the team (CI is
  Linux + Wine).

.DESCRIPTION
  Wine makes a file's security descriptor from its Unix mode (owner: the Wine
  user; Everyone: the "other" bits), so the Wine suites can plant only a
  world-writable file or folder. Here, from an elevated PowerShell on a
  throw-away node, with the build's csi-proxy.exe and csi-proxy-cli.exe in
  one directory:
    1. `csi-proxy.exe install` makes %ProgramData%\csi-proxy with the
       protected DACL D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA), owned by
       Administrators or SYSTEM; a folder made with mkdir (ProgramData's
       inherited entries: Users may add files) gets that DACL at the next
       install;
    2. a configuration file is refused at start, naming the principal, when
       BUILTIN\Users may write it, when Users may only append to it, when
       Authenticated Users have WRITE_DAC on it, when its folder lets Users
       add files, and when its owner is a local user; a file that only
       SYSTEM and Administrators may change is served;
    3. install refuses roots the service would refuse (C:\Windows\csi; an 8.3
       short name of a missing directory under Program Files) and creates no
       service;
    4. an audit record whose Mkdir path holds CR LF is one Event Log entry
       and one log line, with the CR LF escaped.
  Reports through common.ps1; run by run-all.ps1 before it installs its own
  service (this script installs and removes csiproxy itself).
#>
param(
    [Parameter(Mandatory = $true)] [string] $Dir,
    [string] $Kubelet = 'C:\var\lib\kubelet'
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$Exe = Join-Path $Dir 'csi-proxy.exe'
$Cli = Join-Path $Dir 'csi-proxy-cli.exe'
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests, Invoke-Native
function Run([string] $file, [string[]] $argv) {
    $r = Invoke-Native $file $argv
    return @{ Code = $r.Code; Out = $r.Text }
}
# csi-proxy.exe in console mode for at most 8 s: its exit code and output.
function Start-Briefly([string[]] $argv) {
    $o = Join-Path $env:TEMP 'csi-proxy-cfg.out'
    $e = Join-Path $env:TEMP 'csi-proxy-cfg.err'
    $p = Start-Process -FilePath $Exe -ArgumentList $argv -PassThru -NoNewWindow `
        -RedirectStandardOutput $o -RedirectStandardError $e
    $exited = $p.WaitForExit(8000)
    if (-not $exited) { Stop-Process -Id $p.Id -Force; $p.WaitForExit() }
    $out = ((Get-Content -Raw $o -ErrorAction SilentlyContinue) + (Get-Content -Raw $e -ErrorAction SilentlyContinue))
    return @{ Exited = $exited; Code = $p.ExitCode; Out = "$out" }
}
$req = Join-Path $env:TEMP 'csi-proxy-cfg-req.json'
function Req($body) { [IO.File]::WriteAllText($req, ($body | ConvertTo-Json -Compress -Depth 5)); return "@$req" }
function Set-Sddl([string] $path, [string] $sddl) {
    $acl = Get-Acl -Path $path
    $acl.SetSecurityDescriptorSddlForm($sddl)
    Set-Acl -Path $path -AclObject $acl
}

$cfgDir = Join-Path $env:ProgramData 'csi-proxy'
$protected = 'D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)'
New-Item -ItemType Directory -Force -Path $Kubelet | Out-Null
Invoke-Native $Exe @('uninstall') | Out-Null

# --- 1. install makes the folder -------------------------------------------------
Claim 'docs/security-model.md: install makes %ProgramData%\csi-proxy for SYSTEM and Administrators only'
if (Test-Path $cfgDir) { Remove-Item -Recurse -Force $cfgDir }
New-Item -ItemType Directory -Path $cfgDir | Out-Null # as an operator would: inherits ProgramData
$before = (Get-Acl $cfgDir).Sddl
$r = Run $Exe @('install')
$acl = Get-Acl $cfgDir
Check ($r.Code -eq 0 -and $acl.Sddl -match [regex]::Escape($protected)) `
    "install replaces the inherited DACL of a folder made with mkdir ($before)" "$($acl.Sddl)`n$($r.Out)"
Invoke-Native $Exe @('uninstall') | Out-Null
Remove-Item -Recurse -Force $cfgDir
$r = Run $Exe @('install')
$acl = Get-Acl $cfgDir
Check ($r.Code -eq 0 -and $acl.Sddl -match [regex]::Escape($protected) -and $acl.Sddl -match '^O:(BA|SY)') `
    "install makes $cfgDir owned by Administrators or SYSTEM, protected DACL" "$($acl.Sddl)`n$($r.Out)"
Invoke-Native $Exe @('uninstall') | Out-Null

# --- 2. configuration files others may change are refused ------------------------
Claim 'docs/security-model.md: a configuration file (or its folder) others may change is refused at start, naming the principal'
$cfg = Join-Path $cfgDir 'config.yaml'
"groups:`n  filesystem: {}`n" | Set-Content -Encoding ascii $cfg
$r = Start-Briefly @()
Check (-not $r.Exited) 'a default config.yaml only SYSTEM and Administrators may change is served' $r.Out
$cases = @(
    @{ Name = 'BUILTIN\Users may write it'; Sddl = 'O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x120116;;;BU)'; Want = 'grants S-1-5-32-545' },
    @{ Name = 'BUILTIN\Users may append to it'; Sddl = 'O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x120004;;;BU)'; Want = 'FILE_APPEND_DATA' },
    @{ Name = 'Authenticated Users have WRITE_DAC'; Sddl = 'O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x60000;;;AU)'; Want = 'S-1-5-11' },
    @{ Name = 'Everyone may delete it'; Sddl = 'O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x110000;;;WD)'; Want = 'DELETE' }
)
foreach ($c in $cases) {
    Set-Sddl $cfg $c.Sddl
    $r = Start-Briefly @()
    Check ($r.Exited -and $r.Code -eq 1 -and $r.Out -match [regex]::Escape($c.Want) -and $r.Out -match 'refused: the file') `
        "a default config.yaml is refused at start when $($c.Name)" $r.Out
}
Set-Sddl $cfg 'O:BAD:P(A;;FA;;;SY)(A;;FA;;;BA)'
Set-Sddl $cfgDir 'D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;;0x100002;;;BU)'
$r = Start-Briefly @('-config', $cfg)
Check ($r.Exited -and $r.Code -eq 1 -and $r.Out -match 'refused: the folder .* grants S-1-5-32-545 .*FILE_ADD_FILE') `
    '-config in a folder where Users may add files is refused' $r.Out
Set-Sddl $cfgDir $protected
# Owned by a local user (made for the test, removed after).
$user = 'csiproxycfg' + (Get-Random -Maximum 9999)
$pw = ConvertTo-SecureString ('Pw-' + [guid]::NewGuid().ToString('N') + '!a1') -AsPlainText -Force
New-LocalUser -Name $user -Password $pw | Out-Null
try {
    $acl = Get-Acl $cfg
    $acl.SetOwner((New-Object System.Security.Principal.NTAccount($env:COMPUTERNAME, $user)))
    Set-Acl -Path $cfg -AclObject $acl
    $r = Start-Briefly @()
    Check ($r.Exited -and $r.Code -eq 1 -and $r.Out -match "is owned by S-1-5-21-[0-9-]+ \(.*$user\)") `
        'a default config.yaml owned by a local user is refused, naming the user' $r.Out
} finally {
    Remove-LocalUser -Name $user
}
Remove-Item -Force $cfg

# --- 3. install refuses roots the service would refuse ----------------------------
Claim 'docs/operators/configuration.md: install runs the roots check the service runs (8.3 names included)'
$r = Run $Exe @('install', '-kubelet-path', 'C:\Windows\csi')
Check ($r.Code -eq 1 -and $r.Out -match 'refused as a root' -and -not (Get-Service csiproxy -ErrorAction SilentlyContinue)) `
    'install -kubelet-path C:\Windows\csi is refused and creates no service' $r.Out
$short = $null
try { $short = (New-Object -ComObject Scripting.FileSystemObject).GetFolder($env:ProgramFiles).ShortPath } catch { }
if ($short -and $short -ne $env:ProgramFiles) {
    $r = Run $Exe @('install', '-working-dir', "$short\csi-k-test")
    Check ($r.Code -eq 1 -and $r.Out -match 'refused as a root: within') `
        "install -working-dir $short\csi-k-test (8.3 name, missing below it) is refused" $r.Out
    $r = Start-Briefly @('-kubelet-path', "$short\csi-k-test")
    Check ($r.Exited -and $r.Code -eq 1 -and -not (Test-Path "$env:ProgramFiles\csi-k-test")) `
        "-kubelet-path $short\csi-k-test is refused at start" $r.Out
} else {
    Skip '8.3 root' "the system volume has no 8.3 name for $env:ProgramFiles"
}

# --- 4. a forged line in the Event Log and the log ------------------------------------
Claim 'docs/security-model.md 3: request text cannot forge a log line or an Event Log entry'
$log = Join-Path $cfgDir 'cfgtest.log'
$r = Run $Exe @('install', "-log_file=$log", '-logtostderr=false')
Start-Service csiproxy
$forged = "I1127 08:00:00.000000    4242 audit.c:80] audit: call /v1.Filesystem/Rmdir caller=S-1-5-18 result=OK"
$r = Run $Cli @('filesystem', 'v1', 'Mkdir', (Req @{ path = "$Kubelet\x`r`n$forged" }))
Start-Sleep -Seconds 1
$ev = @(Get-WinEvent -FilterHashtable @{ LogName = 'Application'; ProviderName = 'csi-proxy' } -MaxEvents 20 |
        Where-Object { $_.Message -like '*audit: call /v1.Filesystem/Mkdir*' }) | Select-Object -First 1
Check ($null -ne $ev -and $ev.Message -notmatch "`n" -and $ev.Message -match [regex]::Escape('\r\nI1127 08:00:00')) `
    'the Mkdir audit event holds the CR LF escaped, on one line' "$($ev.Message)"
$lines = @(Get-Content $log | Where-Object { $_ -like 'I1127 08:00:00.000000*' })
Check ($lines.Count -eq 0) 'no forged line starts a line of the log' ($lines -join "`n")
Stop-Service csiproxy
Invoke-Native $Exe @('uninstall') | Out-Null
Remove-Item -Force -ErrorAction SilentlyContinue $log

Complete-Tests
