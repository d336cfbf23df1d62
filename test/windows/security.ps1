<#
.SYNOPSIS
  csi-proxy's service and security on a real Windows node: what Wine cannot
  show. Status: written, reviewed, NOT RUN by the team (CI is Linux + Wine).

.DESCRIPTION
  Run from an elevated PowerShell on a throw-away node, with the build's
  csi-proxy.exe, csi-proxy-cli.exe and the test tools svctest.exe and
  squat.exe (build/win/) in one directory. It installs the service with
  `csi-proxy.exe install`, and checks:
    1. the service's configuration and failure actions as the SCM reports
       them (sc.exe qc / qfailure), and the event source;
    2. the kernel enforces the pipe DACL: a client whose token has
       Administrators deny-only (svctest restricted) cannot even open a pipe
       whose DACL grants only SYSTEM and Administrators (ERROR_ACCESS_DENIED,
       csi-proxy-cli exit 14), and the service never sees it;
    2b. an admitted caller can still create its own server instance of a
       pipe (FRFW holds FILE_CREATE_PIPE_INSTANCE): the service reports it
       (Event Log error, health failing for that pipe until a restart);
       an instance the server closed stays counted until its client closes;
    3. the in-process check is the second wall: with a DACL that also admits
       BUILTIN\Users but callers left at SYSTEM + Administrators, the same
       client opens the pipe and gets PERMISSION_DENIED on every call;
    3b. a pipeSecurity with audit entries (S:(AU;...)) is refused at load,
       and why: Windows refuses such a pipe without SeSecurityPrivilege;
    4. the audit records are stored in the Application log (source
       csi-proxy), rendered by the message table, warnings for refusals, and
       hold no secret;
    5. stop with a call in flight, then uninstall.
  Prints "ok - ..." / "not ok - ..." and "N passed, N failed"; exits 1 on
  any failure. Record the result (date, Windows build, output) in README.md.
#>
param(
    [Parameter(Mandatory = $true)] [string] $Dir,
    [string] $Kubelet = 'C:\var\lib\kubelet',
    [string] $WorkDir = "$env:TEMP\csi-proxy-sec"
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$Exe = Join-Path $Dir 'csi-proxy.exe'
$Cli = Join-Path $Dir 'csi-proxy-cli.exe'
$Svc = Join-Path $Dir 'svctest.exe'
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests
$Squat = Join-Path $Dir 'squat.exe'
function Run([string] $file, [string[]] $argv) {
    $r = Invoke-Native $file $argv
    return @{ Code = $r.Code; Out = $r.Text }
}
function WaitState([string] $state, [int] $seconds = 30) {
    $until = (Get-Date).AddSeconds($seconds)
    while ((Get-Date) -lt $until) {
        $s = Get-Service csiproxy -ErrorAction SilentlyContinue
        if ($s -and "$($s.Status)" -eq $state) { return $true }
        Start-Sleep -Milliseconds 200
    }
    return $false
}
# The request goes through a file: PowerShell 5.1 mangles quotes in native arguments.
$req = Join-Path $env:TEMP 'csi-proxy-sec-req.json'
function Req($body) { [IO.File]::WriteAllText($req, ($body | ConvertTo-Json -Compress -Depth 5)); return "@$req" }

New-Item -ItemType Directory -Force -Path $WorkDir, $Kubelet | Out-Null
$log = Join-Path $WorkDir 'csi-proxy.log'
$secret = 'S3cr3t-' + [guid]::NewGuid().ToString('N')

# --- 1. install ---------------------------------------------------------------
Claim 'README "Installing on a node": csi-proxy.exe install (automatic start, restart after 10 s, event source)'
& $Exe uninstall | Out-Null
$r = Run $Exe @('install', "-log_file=$log", '-logtostderr=false', '-v', '2')
Check ($r.Code -eq 0 -and $r.Out -match 'installed') 'csi-proxy.exe install' $r.Out
$qc = (sc.exe qc csiproxy) -join "`n"
Check ($qc -match 'AUTO_START' -and $qc -match '-windows-service') 'sc.exe qc: automatic start, -windows-service' $qc
$qf = (sc.exe qfailure csiproxy) -join "`n"
Check ($qf -match 'RESTART -- Delay = 10000') 'sc.exe qfailure: restart after 10 s' $qf
$key = 'HKLM:\SYSTEM\CurrentControlSet\Services\EventLog\Application\csi-proxy'
Check ((Get-ItemProperty $key).EventMessageFile -eq $Exe) 'event source registered with csi-proxy.exe as message file'

Start-Service csiproxy
Check (WaitState 'Running') 'the service runs'

# --- 2. the kernel enforces the DACL ------------------------------------------
Claim 'README "Security model" 1, pipe DACLs at creation: the kernel refuses an open the DACL does not grant'
# Callers get read and write (FRFW), never WRITE_DAC, WRITE_OWNER or DELETE;
# SYSTEM, which creates the instances, keeps full access.
$r = Run $Svc @('sddl', 'csi-proxy-filesystem-v1')
$want = (Run $Svc @('norm', 'D:P(A;;GA;;;SY)(A;;FRFW;;;BA)')).Out
Check ($r.Out -eq $want) "default pipe DACL: $($r.Out) (want $want)"
$acl = (Get-Acl '\\.\pipe\csi-proxy-filesystem-v1').Access |
    Where-Object { $_.IdentityReference -match 'Administrators' }
Check ($acl -and -not ($acl.FileSystemRights -match 'ChangePermissions|TakeOwnership|Delete|FullControl')) `
    "Administrators may not change the pipe's DACL, owner, or delete it: $($acl.FileSystemRights)"
$r = Run $Cli @('filesystem', 'v1', 'Mkdir', (Req @{ path = "$Kubelet\sec-admin" }))
Check ($r.Code -eq 0 -and (Test-Path "$Kubelet\sec-admin")) 'an elevated admin is served' $r.Out
$r = Run $Svc @('restricted', $Cli, 'filesystem', 'v1', 'Mkdir', (Req @{ path = "$Kubelet\sec-evil" }))
Check ($r.Code -eq 14 -and $r.Out -match 'denied' -and -not (Test-Path "$Kubelet\sec-evil")) `
    'Administrators deny-only: the kernel refuses the open (UNAVAILABLE: access denied)' $r.Out
Check (-not ((Get-Content $log -Raw) -match 'audit: denied')) '... so the service never saw it'

# --- 2b. a caller's own server instance: seen and reported ---------------------
# FRFW holds FILE_APPEND_DATA, which on a pipe is FILE_CREATE_PIPE_INSTANCE:
# an admitted caller can still create an instance of the pipe in its own
# process. csi-proxy sees the instance count above its own and reports it.
$r = Run $Svc @('restricted', $Squat, 'csi-proxy-filesystem-v1', '100')
Check ($r.Code -ne 0 -and $r.Out -match 'error 5') 'a caller the DACL does not admit cannot create an instance (access denied)' $r.Out
$r = Run $Squat @('-linger')
Check ($r.Out -match 'server a closed, its client open: 2') `
    "an instance closed by its server stays counted until its client closes (what the check allows for): $($r.Out)"
$sqOut = Join-Path $WorkDir 'squat.out'
$sq = Start-Process -PassThru -NoNewWindow -FilePath $Squat -ArgumentList 'csi-proxy-filesystem-v1', '10000' `
    -RedirectStandardOutput $sqOut
Start-Sleep -Seconds 6
Check ((Get-Content $sqOut -Raw) -match 'instances [2-9]') 'an administrator (FRFW only) creates an instance of the pipe' (Get-Content $sqOut -Raw)
$ev = @(Get-WinEvent -FilterHashtable @{ LogName = 'Application'; ProviderName = 'csi-proxy'; Level = 2 } -MaxEvents 20 |
        Where-Object { $_.Message -like '*csi-proxy-filesystem-v1: a foreign server instance*' })
Check ($ev.Count -eq 1) "one Event Log error names the pipe ($($ev.Count))"
$r = Run $Cli @('health', '-deadline', '5s')
Check ($r.Code -eq 1 -and $r.Out -match 'filesystem v1 FAIL: .*foreign server instance' -and `
        @($r.Out -split "`n" | Where-Object { $_ -match 'FAIL' }).Count -eq 1) 'health fails for that pipe only' $r.Out
$sq.WaitForExit()
Restart-Service csiproxy
Check (WaitState 'Running') 'the service runs again'
$r = Run $Cli @('health', '-deadline', '10s')
Check ($r.Code -eq 0) 'a restart clears the mark: health passes' $r.Out

# --- 3. the in-process check behind a wider DACL ------------------------------
Claim 'README "Security model" 2, a caller check in the service per connection: PERMISSION_DENIED and audited'
$cfg = Join-Path $env:ProgramData 'csi-proxy\wide.yaml' # made by install, SYSTEM and Administrators only
@"
groups:
  filesystem:
    pipeSecurity: 'D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GRGW;;;BU)'
  smb: {}
  iscsi: {}
"@ | Set-Content -Encoding ascii $cfg
Stop-Service csiproxy
$r = Run $Exe @('install', "-config=$cfg", "-log_file=$log", '-logtostderr=false', '-v', '2')
Check ($r.Code -eq 0) 'reinstalled with a DACL that admits BUILTIN\Users' $r.Out
Start-Service csiproxy
Check (WaitState 'Running') 'the service runs'
$r = Run $Svc @('restricted', $Cli, '--repeat', '3', 'filesystem', 'v1', 'Mkdir', (Req @{ path = "$Kubelet\sec-evil" }))
Check ($r.Code -eq 7 -and -not (Test-Path "$Kubelet\sec-evil")) `
    'the restricted client opens the pipe but gets PERMISSION_DENIED on every call' $r.Out
Check ((Get-Content $log -Raw) -match 'audit: denied caller=S-1-5-21-[0-9-]+ pid=\d+ group=filesystem') '... and an audit record'

# --- 3b. audit entries in pipeSecurity ------------------------------------------
# A SACL with audit entries needs SeSecurityPrivilege enabled at creation
# ("SACL for a New Object"); LocalSystem and elevated admins hold it disabled,
# so such a pipe cannot be created (Wine does not check). csi-proxy refuses
# the configuration at load instead of failing at the first CreateNamedPipeW.
$r = Run $Svc @('mkpipe', 'csi-proxy-sec-au', 'D:P(A;;GA;;;SY)(A;;GA;;;BA)S:(AU;FA;GA;;;WD)')
Check ($r.Out -eq 'error 1314') "the fact: a pipe with an audit SACL is refused without the privilege: $($r.Out)"
$r = Run $Svc @('mkpipe', 'csi-proxy-sec-ml', 'D:P(A;;GA;;;SY)(A;;GA;;;BA)S:(ML;;NW;;;LW)')
Check ($r.Out -eq 'created') "a mandatory label alone needs no privilege (still accepted): $($r.Out)"
$cfg = Join-Path $WorkDir 'audit.yaml'
@"
groups:
  filesystem:
    pipeSecurity: 'D:P(A;;GA;;;SY)(A;;FRFW;;;BA)S:(AU;FA;GA;;;WD)'
"@ | Set-Content -Encoding ascii $cfg
$r = Run $Exe @('install', "-config=$cfg", "-log_file=$log", '-logtostderr=false')
Check ($r.Code -ne 0 -and $r.Out -match 'audit entries \(AU\) are not supported' -and $r.Out -match 'SeSecurityPrivilege') `
    'a pipeSecurity with audit entries is refused at install, saying why' $r.Out
Check ((Get-Service csiproxy).Status -eq 'Running') '... and the running service is left alone'

# --- 4. the Event Log -----------------------------------------------------------
Claim 'README "Security model" 3 and 4: audit records in the Application log, rendered, no secret'
$r = Run $Cli @('smb', 'v1', 'NewSmbGlobalMapping', (Req @{ remote_path = '\\nosuch\share'; local_path = "$Kubelet\smb"; username = 'u'; password = $secret }))
Start-Sleep -Seconds 1
$events = @(Get-WinEvent -FilterHashtable @{ LogName = 'Application'; ProviderName = 'csi-proxy' } -MaxEvents 200)
$mk = $events | Where-Object { $_.Message -like '*audit: call /v1.Filesystem/Mkdir*' } | Select-Object -First 1
Check ($null -ne $mk -and $mk.Id -eq 1 -and $mk.LevelDisplayName -eq 'Information') 'a Mkdir audit event (id 1, information, rendered text)'
$den = $events | Where-Object { $_.Message -like '*audit: denied*' } | Select-Object -First 1
Check ($null -ne $den -and $den.LevelDisplayName -eq 'Warning') 'a refusal audit event (warning)'
Check (-not ($events | Where-Object { $_.Message -like "*$secret*" })) 'no secret in the Event Log'
Check (-not ((Get-Content $log -Raw) -like "*$secret*")) 'no secret in the log file'

# --- 5. stop and uninstall --------------------------------------------------------
Claim 'README "Installing on a node": uninstall removes the service and the event source'
Stop-Service csiproxy
Check (WaitState 'Stopped') 'the service stops'
$r = Run $Exe @('uninstall')
Check ($r.Code -eq 0 -and -not (Get-Service csiproxy -ErrorAction SilentlyContinue)) 'csi-proxy.exe uninstall' $r.Out
Check (-not (Test-Path $key)) 'event source removed'
Remove-Item -Force -ErrorAction SilentlyContinue "$Kubelet\sec-admin"

Complete-Tests
