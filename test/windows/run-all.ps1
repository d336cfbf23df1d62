<#
.SYNOPSIS
  Every script in test/windows/ on one Windows machine (Server 2019, 2022,
  2025), in a fixed order, with one verdict: the closing line
  "N passed, N failed, N skipped" and a JUnit XML file.
  Status: written, NOT RUN by the team (no Windows machine here).

.DESCRIPTION
  Run from an elevated PowerShell on a throw-away machine, with the build's
  csi-proxy.exe, csi-proxy-cli.exe, svctest.exe, pipecheck.exe and
  squat.exe (build/win/) in -Dir.

  Order:
    1. osjudge.ps1, tokcache.ps1, security.ps1, metrics.ps1, config.ps1: no csiproxy
       service (they start csi-proxy.exe in a console, or install and
       uninstall it with `csi-proxy.exe install`, themselves; metrics.ps1
       also takes port 8888, which run-all's service takes later), and with
       -Destructive transport.ps1 (stalled clients, the pid-reuse clock,
       page-file warnings, upgrade rollback), then a check that none of them
       left the service behind;
    2. the build installed as the csiproxy service with upstream's own lines
       (kubernetes-csi/csi-proxy .github/workflows/windows.yml: the exe in
       C:\etc\kubernetes\node\bin, `sc.exe create csiproxy start= "auto"
       binPath= "... -v=5 -windows-service -log_file=... -logtostderr=false
       -metrics-bind-address=localhost:8888"`, `sc.exe failure csiproxy
       reset= 0 actions= restart/10000`, `sc.exe start csiproxy`), plus
       `-config=` a test configuration: groups.smb.allowedServers names this
       machine (for smb.ps1 -SelfShare), groups.system.allowedServices lists
       MSiSCSI (for system.ps1);
    3. selftest.ps1 against that service (the non-destructive part: service,
       health, pipes and their DACLs, the filesystem group in a scratch
       directory, the Event Log, /metrics);
    4. with -Destructive only (it changes the machine): filesystem.ps1
       (links, and the confinement race: it points a junction at the kubelet
       directory, which a confinement defect would empty, and removes
       C:\csi-proxy-race-outside), staging.ps1 and drivers.ps1 (VHDX
       disks made with diskpart), smb.ps1 -SelfShare (two
       local users and shares of this machine), iscsi.ps1 (the iSCSI Target
       Server role over 127.0.0.1), system.ps1 (MSiSCSI stopped and started);
       without it each is one named skip;
    5. the service stopped and deleted;
    6. bench.ps1, only with -BenchBase and -BenchClient (a named skip
       otherwise); with -BenchConns also its transport scale rows.
  Each script runs in a child PowerShell; its output goes to the console and
  to <Out>\<script>.log, its checks (common.ps1) to <Out>\results.jsonl. A
  script that exits non-zero without a failed check, or makes no check at
  all, is a failure of its own ("<script> ran to its end").
.EXAMPLE
  .\run-all.ps1 -Dir C:\csi-test -Destructive -Out C:\csi-test\results
#>
param(
    [Parameter(Mandatory = $true)] [string] $Dir,
    [switch] $Destructive,
    [string] $Out = (Join-Path $env:TEMP 'csi-proxy-windows-tests'),
    [string] $JUnit = '',
    [string] $Kubelet = 'C:\var\lib\kubelet',
    # bench.ps1's base build and client (make bench BASE=...; bench-goclient.exe)
    [string] $BenchBase = '',
    [string] $BenchClient = '',
    # bench.ps1's transport scale rows (bench-conns.exe); none without it
    [string] $BenchConns = '',
    [int] $BenchRounds = 3,
    # A csiproxy service already on this machine is deleted only with this.
    [switch] $ReplaceService
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$Dir = (Resolve-Path -LiteralPath $Dir).Path
New-Item -ItemType Directory -Force -Path $Out, $Kubelet | Out-Null
if (-not $JUnit) { $JUnit = Join-Path $Out 'junit.xml' }
$results = Join-Path $Out 'results.jsonl'
[IO.File]::WriteAllText($results, '')
$env:CSI_PROXY_TEST_RESULTS = $results
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests
$script:TestScriptName = 'run-all'

$os = Get-CimInstance Win32_OperatingSystem
Write-TestLine "# $($os.Caption) build $($os.BuildNumber), PowerShell $($PSVersionTable.PSVersion), destructive: $([bool]$Destructive)"

# Upstream's install, as its workflow has it.
$binDir = 'C:\etc\kubernetes\node\bin'
$logDir = 'C:\etc\kubernetes\logs'
$svcLog = Join-Path $logDir 'csi-proxy.log'
$metrics = 'http://localhost:8888/metrics'
$cfg = 'C:\etc\kubernetes\csi-proxy-test.yaml'
$bin = Join-Path $binDir 'csi-proxy.exe'
$cli = Join-Path $Dir 'csi-proxy-cli.exe'

# --- running one script ------------------------------------------------------------
$psExe = (Get-Process -Id $PID).Path
$script:Utf8NoBom = New-Object Text.UTF8Encoding $false
$script:ChildLog = ''
function Count-Records([string] $scriptName) {
    $n = @{ pass = 0; fail = 0; skip = 0 }
    foreach ($l in [IO.File]::ReadAllLines($results)) {
        if (-not $l) { continue }
        $rec = $l | ConvertFrom-Json
        if ($rec.script -eq $scriptName) { $n[$rec.status]++ }
    }
    $n
}
function Invoke-TestScript([string] $name, [string[]] $argv) {
    $path = Join-Path $PSScriptRoot "$name.ps1"
    $log = Join-Path $Out "$name.log"
    Write-TestLine "# ===== $name.ps1 $($argv -join ' ')"
    $script:ChildLog = $log
    [IO.File]::WriteAllText($log, '')
    # each line of the child, stdout or stderr, to the console and the log as it comes
    $show = { param([string] $text) Write-TestLine $text; [IO.File]::AppendAllText($script:ChildLog, $text + "`r`n", $script:Utf8NoBom) }
    $code = (Invoke-Native $psExe (@('-NoProfile', '-ExecutionPolicy', 'Bypass', '-File', $path) + $argv) $show).Code
    $n = Count-Records $name
    $script:TestClaim = "$name.ps1 completes: it reports every check through common.ps1 and exits 0 only when none failed"
    if ($n.pass + $n.fail + $n.skip -eq 0) {
        Bad "$name.ps1 ran to its end" "exit $code, no check recorded (see $log)"
    } elseif ($code -ne 0 -and $n.fail -eq 0) {
        Bad "$name.ps1 ran to its end" "exit $code without a failed check: it stopped early (see $log)"
    } elseif ($code -eq 0 -and $n.fail -gt 0) {
        Bad "$name.ps1 exit code" "exit 0 with $($n.fail) failed checks"
    }
}
function Skip-TestScript([string] $name, [string] $why) {
    $saved = $script:TestScriptName
    $script:TestScriptName = $name
    $script:TestClaim = ''
    Skip "$name.ps1" $why
    $script:TestScriptName = $saved
}
function Wait-ServiceState([string] $state, [int] $seconds = 60) {
    $until = (Get-Date).AddSeconds($seconds)
    while ((Get-Date) -lt $until) {
        $s = Get-Service csiproxy -ErrorAction SilentlyContinue
        if ($s -and "$($s.Status)" -eq $state) { return $true }
        Start-Sleep -Milliseconds 250
    }
    return $false
}
function Remove-CsiProxyService {
    if (Get-Service csiproxy -ErrorAction SilentlyContinue) {
        sc.exe stop csiproxy | Out-Null
        Wait-ServiceState 'Stopped' 60 | Out-Null
        sc.exe delete csiproxy | Out-Null
    }
}

# --- 0. preconditions ----------------------------------------------------------------
Claim 'run-all.ps1 preconditions: an elevated session and the build under test'
$admin = ([Security.Principal.WindowsPrincipal][Security.Principal.WindowsIdentity]::GetCurrent()).IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)
Check $admin 'the session is elevated (Administrators enabled)'
foreach ($f in 'csi-proxy.exe', 'csi-proxy-cli.exe', 'svctest.exe', 'pipecheck.exe', 'squat.exe') {
    Check (Test-Path -LiteralPath (Join-Path $Dir $f)) "$f is in $Dir"
}
if (Get-Service csiproxy -ErrorAction SilentlyContinue) {
    if (-not $ReplaceService) {
        Bad 'no csiproxy service is installed' 'one is: run on a throw-away machine, or pass -ReplaceService'
        Complete-Tests
    }
    Remove-CsiProxyService
}

# --- 1. without the service ---------------------------------------------------------------
Invoke-TestScript 'osjudge' @('-Dir', $Dir)
Invoke-TestScript 'tokcache' @('-Dir', $Dir, '-Kubelet', $Kubelet)
Invoke-TestScript 'security' @('-Dir', $Dir, '-Kubelet', $Kubelet)
# Here, not with the service: metrics.ps1 installs and uninstalls the csiproxy
# service itself (its first step uninstalls any csiproxy service) and serves
# localhost:8888, the port run-all's service takes in step 2.
Invoke-TestScript 'metrics' @('-Dir', $Dir, '-Port', '8888', '-WorkDir', (Join-Path $Out 'metrics'))
# config.ps1 installs and removes the service itself as well (the protected
# configuration folder, refused configuration files, install's roots check).
Invoke-TestScript 'config' @('-Dir', $Dir, '-Kubelet', $Kubelet)
# transport.ps1 installs and removes the service itself too, and changes
# CrashControl's DedicatedDumpFile for a moment (restored): -Destructive only.
if ($Destructive) {
    Invoke-TestScript 'transport' @('-Dir', $Dir, '-Kubelet', $Kubelet, '-WorkDir', (Join-Path $Out 'transport'))
} else {
    Skip-TestScript 'transport' 'changes the machine: run with -Destructive'
}
Claim 'run-all.ps1: a script that installs its own csiproxy service removes it again'
$until = (Get-Date).AddSeconds(10)   # a deleted service goes once its last handle closes
while ((Get-Service csiproxy -ErrorAction SilentlyContinue) -and (Get-Date) -lt $until) { Start-Sleep -Milliseconds 250 }
$left = [bool](Get-Service csiproxy -ErrorAction SilentlyContinue)
Check (-not $left) 'no csiproxy service is left before run-all installs its own'
if ($left) { Remove-CsiProxyService }

# --- 2. the service, installed as upstream's workflow installs upstream's -------------------
Claim 'README "Installing on a node": a service made with upstream''s sc.exe lines runs (drop-in)'
New-Item -ItemType Directory -Path $binDir, $logDir -Force | Out-Null
Copy-Item -Path (Join-Path $Dir 'csi-proxy.exe') -Destination $bin -Force
@"
# run-all.ps1's test configuration: what the destructive scripts need.
groups:
  filesystem: {}
  disk: {}
  volume: {}
  smb:
    allowedServers: ['$($env:COMPUTERNAME.ToLowerInvariant())']
  system:
    allowedServices: [MSiSCSI]
  iscsi: {}
"@ | Set-Content -Encoding ascii $cfg
$flags = "-v=5 -windows-service -log_file=$svcLog -logtostderr=false -metrics-bind-address=localhost:8888 -config=$cfg"
$o = @(sc.exe create csiproxy start= "auto" binPath= "$bin $flags")
Check ($LASTEXITCODE -eq 0) 'sc.exe create csiproxy start= auto binPath= (upstream''s flags, -config)' ($o -join ' ')
$o = @(sc.exe failure csiproxy reset= 0 actions= restart/10000)
Check ($LASTEXITCODE -eq 0) 'sc.exe failure csiproxy reset= 0 actions= restart/10000' ($o -join ' ')
$o = @(sc.exe start csiproxy)
Check ($LASTEXITCODE -eq 0 -and (Wait-ServiceState 'Running')) 'sc.exe start csiproxy: running' ($o -join ' ')
$until = (Get-Date).AddSeconds(30)
do {
    & $cli health | Out-Null
    $healthy = $LASTEXITCODE -eq 0
    if (-not $healthy) { Start-Sleep -Seconds 1 }
} while (-not $healthy -and (Get-Date) -lt $until)
Check $healthy 'csi-proxy-cli.exe health passes within 30 s of the start'
if (-not $healthy -and (Test-Path $svcLog)) { Get-Content $svcLog -Tail 20 | ForEach-Object { Write-TestLine "#   $_" } }

# --- 3. the node self-test ----------------------------------------------------------------------
Invoke-TestScript 'selftest' @('-Dir', $Dir, '-Kubelet', $Kubelet, '-MetricsUrl', $metrics)

# --- 4. what changes the machine --------------------------------------------------------------
if ($Destructive) {
    Invoke-TestScript 'filesystem' @('-Cli', $cli, '-Kubelet', $Kubelet)
    Invoke-TestScript 'staging' @('-Cli', $cli, '-Kubelet', $Kubelet, '-WorkDir', (Join-Path $Out 'vhd-staging'))
    Invoke-TestScript 'drivers' @('-Cli', $cli, '-Kubelet', $Kubelet, '-WorkDir', (Join-Path $Out 'vhd-drivers'))
    Invoke-TestScript 'smb' @('-Cli', $cli, '-Kubelet', $Kubelet, '-SelfShare', '-ServiceLog', $svcLog)
    Invoke-TestScript 'iscsi' @('-Cli', $cli, '-Kubelet', $Kubelet, '-ServiceLog', $svcLog)
    Invoke-TestScript 'system' @('-Cli', $cli)
} else {
    foreach ($s in 'filesystem', 'staging', 'drivers', 'smb', 'iscsi', 'system') {
        Skip-TestScript $s 'changes the machine: run with -Destructive'
    }
}

# --- 5. the service removed -----------------------------------------------------------------------
Claim 'README "Installing on a node": the service stops on request (sc.exe stop) and is deleted'
sc.exe stop csiproxy | Out-Null
Check (Wait-ServiceState 'Stopped') 'sc.exe stop csiproxy: stopped'
sc.exe delete csiproxy | Out-Null
Start-Sleep -Seconds 1
Check (-not (Get-Service csiproxy -ErrorAction SilentlyContinue)) 'sc.exe delete csiproxy: gone'
Check (@([IO.Directory]::GetFiles('\\.\pipe\') | Where-Object { $_ -like '*\csi-proxy-*' }).Count -eq 0) 'no csi-proxy pipe is left'
Copy-Item -Path $svcLog -Destination (Join-Path $Out 'csi-proxy-service.log') -ErrorAction SilentlyContinue

# --- 6. bench ------------------------------------------------------------------------------------------
if ($BenchBase -and $BenchClient) {
    # (an empty argument would not reach the child: Windows PowerShell 5.1
    # drops empty strings passed to a program)
    if ($BenchConns) {
        Invoke-TestScript 'bench' @('-Ours', (Join-Path $Dir 'csi-proxy.exe'), '-Base', $BenchBase, '-Client', $BenchClient,
            '-Rounds', "$BenchRounds", '-Kubelet', $Kubelet, '-Out', (Join-Path $Out 'bench.json'), '-Conns', $BenchConns)
    } else {
        Invoke-TestScript 'bench' @('-Ours', (Join-Path $Dir 'csi-proxy.exe'), '-Base', $BenchBase, '-Client', $BenchClient,
            '-Rounds', "$BenchRounds", '-Kubelet', $Kubelet, '-Out', (Join-Path $Out 'bench.json'))
    }
} else {
    Skip-TestScript 'bench' 'a measurement, not a check: give -BenchBase and -BenchClient'
}

# --- the verdict ----------------------------------------------------------------------------------------
$t = Write-JUnit $results $JUnit
Write-TestLine "# JUnit: $JUnit; logs: $Out"
Write-TestLine "$($t.Passed) passed, $($t.Failed) failed, $($t.Skipped) skipped"
if ($t.Failed -gt 0) { exit 1 }
exit 0
