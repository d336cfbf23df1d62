<#
.SYNOPSIS
  The service's cache of allowed caller tokens (security/gate_win.c,
  gate_seen) on a real Windows node: the half Wine cannot show.
  Status: written, NOT RUN by the team (CI is Linux + Wine).

.DESCRIPTION
  csi-proxy remembers a process token it judged allowed for a group by the
  token's TokenId and ModifiedId (TOKEN_STATISTICS). Microsoft documents
  ModifiedId as "an LUID that changes each time the token is modified"
  ("TOKEN_STATISTICS structure (winnt.h)"); the cache is safe only if that
  holds for every change that can affect the decision, i.e. for
  AdjustTokenGroups. Wine 8 cannot show it: it has no AdjustTokenGroups
  (ERROR_INVALID_FUNCTION). test/wine/service_security.sh shows the rest
  under Wine (a token modified by AdjustTokenPrivileges is judged again; a
  restricted token made from a remembered one is refused).

  Run from an elevated PowerShell with the build's csi-proxy.exe and
  svctest.exe (build/win/) in -Dir. It starts csi-proxy.exe in console mode
  with -v 2 (the gate logs, for every allowance, the process token's state
  "process token ID modified MID" and "judged" or "judged allowed before in
  this state"), then runs
      svctest tokcache csi-proxy-filesystem-v1 <Kubelet> <Sid>
  which makes PathExists calls, each on a new connection, from one process
  whose token it changes in between, and checks:
    1. a new process is judged; the same unchanged token is then served
       from the cache;
    2. after AdjustTokenPrivileges ModifiedId has changed and the next
       connection is judged again;
    3. AdjustTokenGroups disabling -Sid (a SID the filesystem group allows):
       - if Windows lets it (the group is not mandatory in this token),
         ModifiedId must change and the next connection must be
         PERMISSION_DENIED, and audited ("audit: denied ... pid=...") -
         THE ATTACK; it must not be served from the cache;
       - if not, Windows must refuse with ERROR_CANT_DISABLE_MANDATORY (575):
         the group cannot be taken away in place, so no cached allowance
         can outlive it (reported as such, and the attack is NOT shown).
       BUILTIN\Administrators, the default, is mandatory in an elevated
       token; pass -Sid with a group this token holds enabled and not
       mandatory (svctest prints the attributes it finds) to run the
       attack itself;
    4. (with the default -Sid) a child with Administrators deny-only
       (CreateRestrictedToken) is PERMISSION_DENIED; the unchanged parent
       is still allowed.
  The filesystem group admits -Sid alone, behind a pipe DACL that lets
  everyone open, so that the in-process gate is what decides.
  Prints "ok - ..." / "not ok - ..." and "N passed, N failed"; exits 1 on
  any failure. Record the result (date, Windows build, output) in README.md.
#>
param(
    [Parameter(Mandatory = $true)] [string] $Dir,
    [string] $Sid = 'S-1-5-32-544',
    [string] $Kubelet = 'C:\var\lib\kubelet',
    [string] $WorkDir = "$env:TEMP\csi-proxy-tokcache"
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$Exe = Join-Path $Dir 'csi-proxy.exe'
$Svc = Join-Path $Dir 'svctest.exe'
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

New-Item -ItemType Directory -Force -Path $WorkDir, $Kubelet | Out-Null
Claim 'README "Security model" 2: a cached allowance never outlives the token state it was judged in (TokenId and ModifiedId)'
# The config in a folder only SYSTEM and Administrators may change: csi-proxy
# refuses a configuration file (or folder) anyone else could write.
$cfgDir = Join-Path $env:ProgramData 'csi-proxy'
New-Item -ItemType Directory -Force -Path $cfgDir | Out-Null
$acl = New-Object System.Security.AccessControl.DirectorySecurity
$acl.SetSecurityDescriptorSddlForm('D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)')
Set-Acl -Path $cfgDir -AclObject $acl
$cfg = Join-Path $cfgDir 'tokcache.yaml'
$log = Join-Path $WorkDir 'server.log'
$out = Join-Path $WorkDir 'server.out'
Remove-Item -Force -ErrorAction SilentlyContinue $log, $out
# The filesystem group admits -Sid alone (so taking it away must refuse);
# its pipe's DACL lets everyone open (so the kernel does not refuse first:
# it is the in-process gate, and its cache, under test).
@"
security:
  allowBroadCallers: true
groups:
  filesystem:
    allowedCallers: ['$Sid']
    pipeSecurity: 'D:P(A;;GA;;;SY)(A;;GA;;;BA)(A;;GRGW;;;WD)'
log:
  v: 2
"@ | Set-Content -Encoding ascii $cfg

$server = Start-Process -FilePath $Exe -ArgumentList @("-config=$cfg") -PassThru -NoNewWindow `
    -RedirectStandardError $log -RedirectStandardOutput $out
try {
    $until = (Get-Date).AddSeconds(20)
    while (-not (Test-Path '\\.\pipe\csi-proxy-filesystem-v1') -and (Get-Date) -lt $until) { Start-Sleep -Milliseconds 200 }
    Check (Test-Path '\\.\pipe\csi-proxy-filesystem-v1') 'csi-proxy.exe serves the filesystem pipe'

    $r = Invoke-Native $Svc @('tokcache', 'csi-proxy-filesystem-v1', $Kubelet, $Sid)
    $text = $r.Out
    $code = $r.Code
    $text | ForEach-Object { Write-Output "# tokcache: $_" }
    Start-Sleep -Milliseconds 500
    $L = Get-Content $log -Raw
    $states = @($text | Where-Object { $_ -match '^token ' } | ForEach-Object { $_.Substring(6) }) +
        @('none', 'none', 'none') # (strict mode: no index past the end)
    function Allowed([string] $state, [string] $how) {
        return ([regex]::Matches($L, 'allowed on csi-proxy-filesystem-v1: process token ' +
                [regex]::Escape($state) + ' ' + [regex]::Escape($how) + '\r?\n')).Count
    }
    function Said([string] $line) { return [bool]($text | Where-Object { $_.StartsWith($line) }) }

    Check ($code -eq 0) "svctest tokcache ran (exit $code)"
    $s1 = $states[0]; $s2 = $states[1]
    Check ((Said 'call unchanged-1: status 0') -and (Allowed $s1 'judged') -eq 1) "1. a new process is judged ($s1)"
    Check ((Said 'call unchanged-2: status 0') -and (Allowed $s1 'judged allowed before in this state') -ge 1) `
        '... its unchanged token is served from the cache on a new connection'
    Check ($s1 -ne $s2 -and $s1.Split(' ')[0] -eq $s2.Split(' ')[0]) "2. AdjustTokenPrivileges changes ModifiedId ($s1 -> $s2)"
    Check ((Said 'call privileges-adjusted: status 0') -and (Allowed $s2 'judged') -eq 1) '... and the next connection is judged again'

    if (Said "groups: AdjustTokenGroups disabled $Sid") {
        $s3 = $states[2]
        Check ($s3 -ne $s2) "3. AdjustTokenGroups (disable $Sid) changes ModifiedId ($s2 -> $s3)"
        Check (Said 'call groups-adjusted: status 7 csi-proxy: this caller is not allowed to use the filesystem group') `
            "... THE ATTACK: the token allowed and remembered a moment ago, with $Sid disabled in place, is PERMISSION_DENIED on a new connection" `
            ($text -join "`n")
        Check ((Allowed $s3 'judged allowed before in this state') -eq 0 -and (Allowed $s3 'judged') -eq 0) '... and was not served from the cache'
        Check ($L -match "audit: denied caller=S-1-5-[0-9-]+ pid=\d+ group=filesystem pipe=csi-proxy-filesystem-v1: process token: .*$([regex]::Escape($Sid))") `
            '... and the refusal is audited, naming the SID'
    } else {
        Check (Said "groups: AdjustTokenGroups cannot disable ${Sid}: error 575") `
            "3. Windows refuses to disable $Sid in place (ERROR_CANT_DISABLE_MANDATORY): no cached allowance can outlive it. The attack itself was NOT run: pass -Sid with a non-mandatory group" `
            ($text -join "`n")
    }

    if ($Sid -eq 'S-1-5-32-544') {
        Check (Said 'call restricted-child: status 7 csi-proxy: this caller is not allowed to use the filesystem group') `
            '4. a child with Administrators deny-only is PERMISSION_DENIED'
    }
    Check (Said 'call after-child: status 0') '... and the unchanged parent is still allowed'
} finally {
    Stop-Process -Id $server.Id -Force -ErrorAction SilentlyContinue
}
Complete-Tests
