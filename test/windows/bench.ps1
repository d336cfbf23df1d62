<#
.SYNOPSIS
  Issue 12's real-client rows on a real Windows host: this build against a
  base build, the same grpc-go client, alternating rounds.
  Status: written, NOT RUN by the team (CI is Linux + Wine).

.DESCRIPTION
  `make bench BASE=<commit>` measures under Wine, where most of the server's
  CPU goes to Wine's own way of doing named-pipe I/O (wineserver round
  trips, a system APC per completed read, signals to a busy thread; see the
  README's issue 12 section). On Windows none of that exists, so the ratios
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

  Not measured here: system calls per call (the `make bench` row "wineserver
  requests per call" has no direct Windows counterpart; an ETW trace, e.g.
  `wpr -start GeneralProfile` around one row, would give them).

  Run from an elevated PowerShell (the server's default pipe security admits
  Administrators and SYSTEM) on a host with no csi-proxy service running:

    .\bench.ps1 -Ours C:\bench\ours\csi-proxy.exe -Base C:\bench\base\csi-proxy.exe `
                -Client C:\bench\bench-goclient.exe -Rounds 5

  The base build comes from `make bench BASE=<commit>` (it leaves
  build/bench-base/<commit>/build/win/csi-proxy.exe).
#>
param(
    [Parameter(Mandatory = $true)][string]$Ours,
    [Parameter(Mandatory = $true)][string]$Base,
    [Parameter(Mandatory = $true)][string]$Client,
    [int]$Rounds = 3,
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

function Start-Server([string]$Exe, [string]$Log) {
    if ((Get-CsiPipes).Count -gt 0) { throw 'csi-proxy pipes exist already: stop the csi-proxy service first' }
    $sw = [Diagnostics.Stopwatch]::StartNew()
    $p = Start-Process -FilePath $Exe -PassThru -NoNewWindow `
        -ArgumentList @('-kubelet-path', $Kubelet, '-working-dir', $WorkDir) `
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
    ratios = $table; runs = $results
} | ConvertTo-Json -Depth 6 | Set-Content -Encoding UTF8 $Out
Write-Host "written to $Out"
Claim 'README "Performance": the real grpc-go client rows on Windows (a measurement; it passes when every row ran)'
Ok "every row ran $Rounds rounds on both builds; the ratios are in $Out"
Complete-Tests
