<#
.SYNOPSIS
  The real-client rows of `make bench` (docs/performance.md) on a real
  Windows host: this build against a base build, the same grpc-go client,
  alternating rounds.
  Status: written, NOT RUN by the team (CI is Linux + Wine).

.DESCRIPTION
  `make bench BASE=<commit>` measures under Wine, where most of the server's
  CPU goes to Wine's own way of doing named-pipe I/O (wineserver round
  trips, a system APC per completed read, signals to a busy thread; see
  docs/performance.md). On Windows none of that exists, so the ratios
  may differ, and designs dropped because of Wine (an I/O thread running the
  calls it reads, with several threads on the completion port) would need
  measuring here. This script runs the rows of `make bench`'s real-client
  part with the same client (build/win/bench-goclient.exe: grpc-go 1.33,
  default options, so BDP pings go out as from a driver):

    go-seq      seq -warm 100 -calls 1000 (plus an idle client on disk v1)
    go-conc8    conc -n 8 -warm 400 -calls 4000
    go-clients8 clients -n 8 -warm 400 -calls 4000
    go-churn    churn -warm 10 -calls 200

  For each round and build (the order alternates): starts csi-proxy.exe in
  console mode, records the time from Start-Process until all 23 pipes
  exist and the server's CPU by then, its idle working set after 1 s, then
  each row with the server's CPU time (Process.TotalProcessorTime) around it;
  stops the server and waits until its pipes are gone (two servers cannot
  hold the same pipe names). It prints per-row medians and the median of
  the per-round ratios ours/base, the server CPU per call of the whole mix,
  and writes everything to -Out as JSON.

  With -Conns (build/win/bench-conns.exe), each build then gets the
  transport's scale rows, what test/wine/transport.sh checks under Wine,
  once each, with a configuration whose system group admits only SYSTEM
  while its pipe's DACL lets Administrators open it (so this elevated
  process is refused by the caller check, not by the kernel) and whose
  limits.maxConnections is above -Idle:

    refused-burst  an allowed client's p99 (seq, 1000 calls) while
                   bench-conns fires -Refused refused connects at the
                   system pipe, against its p99 with none
    idle           with -Idle connections opened as go-winio's DialPipe
                   opens them, never speaking (csi-proxy's client library
                   leaves one per NewClient): a call's p50 (seq), a new
                   connection's dial + first call p50 (first), and the
                   server's CPU over 5 s with nothing called, each against
                   the same with none

  For this build each ratio must be within 2x (the server's idle CPU: at
  most 50 ms more over the 5 s): checks, reported as such; the base
  build's figures are shown beside them, not judged.

  Not measured here: system calls per call (the `make bench` row "wineserver
  requests per call" has no direct Windows counterpart; an ETW trace, e.g.
  `wpr -start GeneralProfile` around one row, would give them).

  Run from an elevated PowerShell (the server's default pipe security admits
  Administrators and SYSTEM) on a host with no csi-proxy service running:

    .\bench.ps1 -Ours C:\bench\ours\csi-proxy.exe -Base C:\bench\base\csi-proxy.exe `
                -Client C:\bench\bench-goclient.exe -Rounds 5 -Conns C:\bench\bench-conns.exe

  The base build comes from `make bench BASE=<commit>` (it leaves
  build/bench-base/<commit>/build/win/csi-proxy.exe).
#>
param(
    [Parameter(Mandatory = $true)][string]$Ours,
    [Parameter(Mandatory = $true)][string]$Base,
    [Parameter(Mandatory = $true)][string]$Client,
    [int]$Rounds = 3,
    [string]$Conns = '',
    [int]$Idle = 2000,
    [int]$Refused = 1000,
    [string]$Kubelet = 'C:\var\lib\kubelet',
    [string]$WorkDir = 'C:\csiproxy-test',
    [string]$Out = (Join-Path $env:TEMP 'csi-proxy-bench-windows.json')
)
$ErrorActionPreference = 'Stop'
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

$rows = [ordered]@{
    'go-seq'      = @('seq', '-warm', '100', '-calls', '1000')
    'go-conc8'    = @('conc', '-n', '8', '-warm', '400', '-calls', '4000')
    'go-clients8' = @('clients', '-n', '8', '-warm', '400', '-calls', '4000')
    'go-churn'    = @('churn', '-warm', '10', '-calls', '200')
}
function Get-CsiPipes {
    @([System.IO.Directory]::GetFiles('\\.\pipe\') | Where-Object { $_ -like '*\csi-proxy-*' })
}

function Wait-PipesGone([int]$TimeoutMs = 10000) {
    $sw = [Diagnostics.Stopwatch]::StartNew()
    while ((Get-CsiPipes).Count -gt 0) {
        if ($sw.ElapsedMilliseconds -gt $TimeoutMs) { throw "csi-proxy pipes still there after $TimeoutMs ms" }
        Start-Sleep -Milliseconds 20
    }
}

function Start-Server([string]$Exe, [string]$Log, [string[]]$Extra = @()) {
    if ((Get-CsiPipes).Count -gt 0) { throw 'csi-proxy pipes exist already: stop the csi-proxy service first' }
    $sw = [Diagnostics.Stopwatch]::StartNew()
    $p = Start-Process -FilePath $Exe -PassThru -NoNewWindow `
        -ArgumentList (@('-kubelet-path', $Kubelet, '-working-dir', $WorkDir) + $Extra) `
        -RedirectStandardOutput "$Log.out" -RedirectStandardError "$Log.err"
    while ((Get-CsiPipes).Count -lt 23) {
        if ($p.HasExited) { throw "$Exe exited (code $($p.ExitCode)) before its pipes came up" }
        if ($sw.ElapsedMilliseconds -gt 10000) { throw "${Exe}: not all 23 pipes after 10 s" }
        Start-Sleep -Milliseconds 1
    }
    $ms = $sw.Elapsed.TotalMilliseconds
    $p.Refresh()
    [pscustomobject]@{ Process = $p; StartMs = $ms; StartCpuMs = $p.TotalProcessorTime.TotalMilliseconds }
}

function Stop-Server($s) {
    Stop-Process -Id $s.Process.Id -Force
    $s.Process.WaitForExit(10000) | Out-Null
    Wait-PipesGone
}

function Invoke-Row([string]$Name, [string[]]$ArgList, $Proc) {
    $Proc.Refresh()
    $c0 = $Proc.TotalProcessorTime.TotalMilliseconds
    $line = & $Client @ArgList -label $Name | Select-Object -Last 1
    if ($LASTEXITCODE -ne 0) { throw "$Name failed: $line" }
    $Proc.Refresh()
    $c1 = $Proc.TotalProcessorTime.TotalMilliseconds
    $r = $line | ConvertFrom-Json
    [pscustomobject]@{
        row = $Name; calls_per_s = [double]$r.calls_per_s; p50_us = [double]$r.p50_us
        total_calls = [int]$r.total_calls; server_cpu_ms = $c1 - $c0
    }
}

function Median([double[]]$v) {
    $s = @($v | Sort-Object)
    if ($s.Count -eq 0) { return [double]::NaN }
    if ($s.Count % 2) { return $s[($s.Count - 1) / 2] }
    ($s[$s.Count / 2 - 1] + $s[$s.Count / 2]) / 2
}

New-Item -ItemType Directory -Force -Path (Join-Path $WorkDir 'dir'), $Kubelet | Out-Null
if (-not (Test-Path $Client)) { throw "no client at $Client" }

$results = @()
for ($k = 1; $k -le $Rounds; $k++) {
    $order = if ($k % 2 -eq 0) { @('base', 'ours') } else { @('ours', 'base') }
    foreach ($b in $order) {
        $exe = if ($b -eq 'ours') { $Ours } else { $Base }
        $s = Start-Server $exe (Join-Path $env:TEMP "csi-proxy-bench-$b-$k")
        Start-Sleep -Seconds 1
        $s.Process.Refresh()
        $idle = $s.Process.WorkingSet64
        $rec = [ordered]@{ build = $b; round = $k; start_ms = $s.StartMs; start_cpu_ms = $s.StartCpuMs; idle_ws_bytes = $idle; rows = @() }
        foreach ($name in $rows.Keys) {
            $r = Invoke-Row $name $rows[$name] $s.Process
            $rec['rows'] += $r
            Write-Host ("{0} round {1} {2}: {3:N0} calls/s, p50 {4:N0} us, server CPU {5:N1} us/call" -f `
                    $b, $k, $name, $r.calls_per_s, $r.p50_us, ($r.server_cpu_ms * 1000 / $r.total_calls))
        }
        Stop-Server $s
        $results += [pscustomobject]$rec
    }
}

# per-round ratios ours/base, then their median
function Ratio([scriptblock]$Get) {
    $v = @()
    for ($k = 1; $k -le $Rounds; $k++) {
        $o = $results | Where-Object { $_.build -eq 'ours' -and $_.round -eq $k }
        $b = $results | Where-Object { $_.build -eq 'base' -and $_.round -eq $k }
        $v += (& $Get $o) / (& $Get $b)
    }
    Median $v
}
function MixCpuPerCall($r) {
    $cpu = ($r.rows | Measure-Object -Property server_cpu_ms -Sum).Sum
    $calls = ($r.rows | Measure-Object -Property total_calls -Sum).Sum
    $cpu * 1000 / $calls
}

# --- the transport's scale rows (-Conns) -------------------------------------------------
# One client run; its JSON line as an object.
function Invoke-Client([string[]]$ArgList) {
    $line = & $Client @ArgList | Select-Object -Last 1
    if ($LASTEXITCODE -ne 0) { throw "bench-goclient $($ArgList -join ' ') failed: $line" }
    $line | ConvertFrom-Json
}
# Until a file holds a line matching $Pattern (or the process ended); the line.
function Wait-Line([string]$File, [string]$Pattern, $Proc, [int]$TimeoutS) {
    $sw = [Diagnostics.Stopwatch]::StartNew()
    while ($sw.Elapsed.TotalSeconds -lt $TimeoutS) {
        if (Test-Path $File) {
            $hit = @(Get-Content $File | Where-Object { $_ -match $Pattern })
            if ($hit.Count -gt 0) { return $hit[0] }
        }
        if ($Proc.HasExited) { break }
        Start-Sleep -Milliseconds 200
    }
    ''
}
function Get-IdleCpuMs($Proc) {
    Start-Sleep -Seconds 1
    $Proc.Refresh()
    $c0 = $Proc.TotalProcessorTime.TotalMilliseconds
    Start-Sleep -Seconds 5
    $Proc.Refresh()
    $Proc.TotalProcessorTime.TotalMilliseconds - $c0
}
# A bound is a check for this build; the base build's figure is only shown.
function Test-Bound([string]$Build, [bool]$Cond, [string]$Name) {
    if ($Build -eq 'ours') { Check $Cond $Name } else { Write-Host "# base (not judged): $Name" }
}
function Test-Ratio([string]$Build, [string]$What, [double]$With, [double]$Without) {
    $r = if ($Without -gt 0) { $With / $Without } else { [double]::PositiveInfinity }
    Test-Bound $Build ($r -le 2) ('{0}: {1}: {2:N0} us, without {3:N0} us: ratio {4:N2} (bound 2x)' -f $Build, $What, $With, $Without, $r)
}
function Invoke-ScaleRows([string]$Build, [string]$Exe) {
    $tmp = Join-Path $env:TEMP "csi-proxy-scale-$Build"
    New-Item -ItemType Directory -Force -Path $tmp | Out-Null
    # The config in a folder only SYSTEM and Administrators may change:
    # csi-proxy refuses a configuration file (or folder) anyone else could write.
    $cfgDir = Join-Path $env:ProgramData 'csi-proxy-bench'
    New-Item -ItemType Directory -Force -Path $cfgDir | Out-Null
    $acl = New-Object System.Security.AccessControl.DirectorySecurity
    $acl.SetSecurityDescriptorSddlForm('D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)')
    Set-Acl -Path $cfgDir -AclObject $acl
    $cfg = Join-Path $cfgDir 'transport.yaml'
    Set-Content -Encoding ASCII -Path $cfg -Value @(
        'groups:', '  filesystem: {}', '  disk: {}', '  volume: {}', '  smb: {}', '  system:',
        '    allowedCallers: [SYSTEM]', "    pipeSecurity: 'D:P(A;;GA;;;SY)(A;;FRFW;;;BA)'", '  iscsi: {}',
        'limits:', "  maxConnections: $($Idle + 1000)")
    $s = Start-Server $Exe (Join-Path $tmp 'server') @('-config', $cfg)
    $p = $s.Process
    try {
        # refused connects while an allowed client calls
        $quiet = Invoke-Client @('seq', '-warm', '300', '-calls', '1000', '-label', 'quiet')
        $ready = Join-Path $tmp 'ready'
        $done = Join-Path $tmp 'done'
        $during = Join-Path $tmp 'during.out'
        Remove-Item -Force $ready, $done -ErrorAction SilentlyContinue
        $cl = Start-Process -FilePath $Client -PassThru -NoNewWindow -RedirectStandardOutput $during `
            -ArgumentList @('seq', '-warm', '300', '-calls', '300', '-ready', $ready, '-until', $done, '-label', 'during-burst')
        $sw = [Diagnostics.Stopwatch]::StartNew()
        while (-not (Test-Path $ready) -and -not $cl.HasExited -and $sw.Elapsed.TotalSeconds -lt 60) { Start-Sleep -Milliseconds 50 }
        $burst = & $Conns refuse -n $Refused -threads 2 -pipe csi-proxy-system-v1alpha1 | Select-Object -Last 1
        Set-Content -Path $done -Value ''
        $cl.WaitForExit(300000) | Out-Null
        $b = $burst | ConvertFrom-Json
        Write-Host "$Build burst: $burst"
        Check ($b.refused -eq $Refused) "${Build}: $Refused connects to the system pipe (SYSTEM only) all refused by the caller check" $burst
        $d = (Get-Content $during | Where-Object { $_ -match '^\{' } | Select-Object -First 1) | ConvertFrom-Json
        Write-Host ("{0} during the burst: {1} calls, p99 {2:N0} us; quiet p99 {3:N0} us" -f $Build, $d.calls, $d.p99_us, $quiet.p99_us)
        Test-Ratio $Build "an allowed call's p99 during $Refused refused connects" $d.p99_us $quiet.p99_us

        # idle connections
        $seq0 = Invoke-Client @('seq', '-warm', '300', '-calls', '600', '-label', 'seq-0')
        $first0 = Invoke-Client @('first', '-warm', '20', '-calls', '300', '-label', 'first-0')
        $cpu0 = Get-IdleCpuMs $p
        $stop = Join-Path $tmp 'idle.stop'
        $idleOut = Join-Path $tmp 'idle.out'
        Remove-Item -Force $stop, $idleOut -ErrorAction SilentlyContinue
        $holder = Start-Process -FilePath $Conns -PassThru -NoNewWindow -RedirectStandardOutput $idleOut `
            -ArgumentList @('idle', '-n', "$Idle", '-stop', $stop, 'csi-proxy-filesystem-v1')
        $line = Wait-Line $idleOut '"kind":"idle"' $holder 300
        Write-Host "$Build idle: $line"
        Check ($line -match ('"opened":' + $Idle + ',')) "${Build}: $Idle idle connections opened as go-winio opens them" $line
        $cpu1 = Get-IdleCpuMs $p
        Test-Bound $Build ($cpu1 -le $cpu0 + 50) ('{0}: the server''s CPU over 5 s with nothing called: {1:N0} ms with {2} idle connections, {3:N0} ms with none (at most 50 ms more)' -f $Build, $cpu1, $Idle, $cpu0)
        $seq1 = Invoke-Client @('seq', '-warm', '300', '-calls', '600', '-label', 'seq-idle')
        $first1 = Invoke-Client @('first', '-warm', '20', '-calls', '300', '-label', 'first-idle')
        Set-Content -Path $stop -Value ''
        $holder.WaitForExit(60000) | Out-Null
        Test-Ratio $Build "a call's p50 with $Idle idle connections" $seq1.p50_us $seq0.p50_us
        Test-Ratio $Build "a new connection's dial + first call p50 with $Idle idle connections" $first1.p50_us $first0.p50_us
        [pscustomobject]@{
            build = $Build; quiet_p99_us = $quiet.p99_us; burst_p99_us = $d.p99_us; burst_calls = $d.calls; burst = $b
            seq0_p50_us = $seq0.p50_us; seq_idle_p50_us = $seq1.p50_us; first0_p50_us = $first0.p50_us
            first_idle_p50_us = $first1.p50_us; idle_cpu0_ms = $cpu0; idle_cpu_ms = $cpu1
        }
    } finally {
        Stop-Server $s
    }
}
$scale = @()
if ($Conns) {
    if (-not (Test-Path $Conns)) { throw "no bench-conns.exe at $Conns" }
    Claim 'the transport serves any number of idle connections and refused callers at no cost to allowed ones (test/wine/transport.sh, on Windows)'
    $scale += Invoke-ScaleRows 'ours' $Ours
    $scale += Invoke-ScaleRows 'base' $Base
}

$table = [ordered]@{}
$table['server CPU per call (mix), us'] = Ratio { param($r) MixCpuPerCall $r }
foreach ($name in $rows.Keys) {
    $rate = { param($r) ($r.rows | Where-Object row -eq $name).calls_per_s }.GetNewClosure()
    $cpu = { param($r) $x = $r.rows | Where-Object row -eq $name; $x.server_cpu_ms / $x.total_calls }.GetNewClosure()
    $table["$name calls/s"] = Ratio $rate
    $table["$name server CPU per call"] = Ratio $cpu
}
$table['go-seq p50'] = Ratio { param($r) ($r.rows | Where-Object row -eq 'go-seq').p50_us }
$table['start to 23 pipes'] = Ratio { param($r) $r.start_ms }
$table['server CPU until 23 pipes'] = Ratio { param($r) $r.start_cpu_ms }
$table['idle working set'] = Ratio { param($r) $r.idle_ws_bytes }

Write-Host ''
Write-Host ("{0} rounds, median of per-round ratios ours/base (Windows {1})" -f $Rounds, [Environment]::OSVersion.Version)
foreach ($key in $table.Keys) { Write-Host ("  {0,-40} {1,6:N2}" -f $key, $table[$key]) }
[ordered]@{
    date = (Get-Date).ToUniversalTime().ToString('o'); windows = [Environment]::OSVersion.VersionString
    cpus = [Environment]::ProcessorCount; ours = $Ours; base = $Base; rounds = $Rounds
    ratios = $table; runs = $results; scale = $scale
} | ConvertTo-Json -Depth 6 | Set-Content -Encoding UTF8 $Out
Write-Host "written to $Out"
Claim 'README "Performance": the real grpc-go client rows on Windows (a measurement; it passes when every row ran)'
Ok "every row ran $Rounds rounds on both builds; the ratios are in $Out"
Complete-Tests
