<#
.SYNOPSIS
  csi-proxy's transport limits, pid-reuse guard, page-file parsing and
  upgrade rollback on a real Windows node: what Wine cannot show. Status:
  written, reviewed, NOT RUN by the team (CI is Linux + Wine).

.DESCRIPTION
  Run from an elevated PowerShell on a throw-away node, with the build's
  csi-proxy.exe, csi-proxy-cli.exe and the test tool pipecheck.exe
  (build/win/pipecheck.exe) in one directory. It installs the service with
  `csi-proxy.exe install` (from a copy, so that step 4 can swap it) and
  checks:
    1. page files and crash dumps: on a node whose page files are where
       Windows says (ExistingPageFiles holds "\??\C:\pagefile.sys"), neither
       the service's start nor `csi-proxy-cli health` names an entry whose
       volume cannot be told; a DedicatedDumpFile set to a relative path
       (restored after) is named by health as a warning, exit still 0;
    2. the pid-reuse guard takes the connect's time with the precise clock:
       40 clients started at once, each connecting right after it starts
       (csi-proxy-cli PathExists), are all served, and the log has no
       "created after the connection" refusal (with the clock tick as
       threshold, a client created and connected within one tick could be
       taken for a later process);
    3. stalled clients: pipecheck -stall 200 1000 (zero flow-control window,
       1,000 calls each, nothing read) grows the service's working set by
       less than 64 MB, and a normal call is answered meanwhile (Windows,
       unlike Wine, makes the service's pipe writes wait for the reader);
    4. upgrade rollback waits for the new service's process: an install of
       the same build with a log file in a missing directory (the new
       service stops at once; the SCM reports STOPPED before its process
       has exited) is rolled back: exit 3, "old binary restored" (the
       MoveFileEx over the new exe succeeded, so its process was gone), the
       previous service serves again; never "did not stop";
    5. writes left pending (Windows makes a pipe write wait for its reader;
       Wine completes it at once): pipecheck -flood 3000 (answers read only
       a second after the last call, outgrowing the 64 KiB pipe) gets all
       3,000 answers, twice with 20 s idle between: the workers that
       started those writes never exit, so none is cancelled;
    6. the completion ports' waits: the log has no "GetQueuedCompletionStatusEx
       failed" after all of the above, and 300 idle connections cost the
       service no CPU (under 0.2 s over 10 s: nothing polls);
    7. refusals off the I/O path: 500 connects the caller check refuses
       (the system group admits only SYSTEM; this admin's pipecheck -h2
       opens and speaks) leave a normal call's time within 2x of its time
       before, and the Event Log holds the refusal records or the queue's
       summary record ("were not written to the Event Log").
  Reports through common.ps1 ("N passed, N failed, N skipped"); exits 1 on
  any failure. run-all.ps1 runs it with -Destructive (it changes
  CrashControl's DedicatedDumpFile for a moment, restoring it, and installs
  and removes the csiproxy service itself).
#>
param(
    [Parameter(Mandatory = $true)] [string] $Dir,
    [string] $Kubelet = 'C:\var\lib\kubelet',
    [string] $WorkDir = "$env:TEMP\csi-proxy-transport"
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$Cli = Join-Path $Dir 'csi-proxy-cli.exe'
$Pipecheck = Join-Path $Dir 'pipecheck.exe'
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests, Invoke-Native
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
$req = Join-Path $env:TEMP 'csi-proxy-transport-req.json'
function Req($body) { [IO.File]::WriteAllText($req, ($body | ConvertTo-Json -Compress -Depth 5)); return "@$req" }
function ServiceProcess() { Get-Process -Id (Get-CimInstance Win32_Service -Filter "Name='csiproxy'").ProcessId }

New-Item -ItemType Directory -Force -Path $WorkDir, $Kubelet | Out-Null
$log = Join-Path $WorkDir 'csi-proxy.log'
$OldDir = Join-Path $WorkDir 'old'
New-Item -ItemType Directory -Force -Path $OldDir | Out-Null
Copy-Item -Force (Join-Path $Dir 'csi-proxy.exe') $OldDir
$Exe = Join-Path $OldDir 'csi-proxy.exe'

Claim 'docs/operators/install.md: csi-proxy.exe install on a node without the service'
Invoke-Native (Join-Path $Dir 'csi-proxy.exe') @('uninstall') | Out-Null
$r = Run $Exe @('install', "-log_file=$log", '-logtostderr=false', '-v', '2')
Check ($r.Code -eq 0 -and (WaitState 'Running')) 'installed from a copy; the service runs' $r.Out

# --- 1. page files and crash dumps ------------------------------------------------
Claim 'docs/operators/health-and-metrics.md: a page-file or crash-dump entry whose volume cannot be resolved is a health warning'
$mm = 'HKLM:\SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management'
$existing = (Get-ItemProperty $mm -ErrorAction SilentlyContinue).ExistingPageFiles
Write-TestLine "# ExistingPageFiles: $($existing -join ' | ')"
$r = Run $Cli @('health')
Check ($r.Code -eq 0 -and $r.Out -notmatch 'warning: (page file|crash dump file) entry') `
    'health: every page-file and crash-dump entry of this node resolves to a volume' $r.Out
Check (-not ((Get-Content $log -Raw) -match 'its volume cannot be told')) '... and the service said nothing at start'
$cc = 'HKLM:\SYSTEM\CurrentControlSet\Control\CrashControl'
$had = (Get-ItemProperty $cc).PSObject.Properties.Name -contains 'DedicatedDumpFile'
$prev = if ($had) { (Get-ItemProperty $cc).DedicatedDumpFile } else { $null }
try {
    Set-ItemProperty $cc -Name DedicatedDumpFile -Value 'dedicated.sys'
    $r = Run $Cli @('health')
    Check ($r.Code -eq 0 -and $r.Out -match 'warning: crash dump file entry "dedicated.sys" .*\(not an absolute path\)') `
        'health names a DedicatedDumpFile whose volume cannot be told (a warning, exit 0)' $r.Out
} finally {
    if ($had) { Set-ItemProperty $cc -Name DedicatedDumpFile -Value $prev }
    else { Remove-ItemProperty $cc -Name DedicatedDumpFile }
}

# --- 2. the pid-reuse guard does not refuse fresh clients -------------------------
Claim 'docs/security-model.md 2: the opener must have been created before the connection, by the precise clock'
$body = Req @{ path = $Kubelet }
$procs = 1..40 | ForEach-Object {
    Start-Process -FilePath $Cli -ArgumentList @('filesystem', 'v1', 'PathExists', $body) -NoNewWindow -PassThru
}
$procs | Wait-Process -Timeout 120
$failed = @($procs | Where-Object { $_.ExitCode -ne 0 })
Check ($failed.Count -eq 0) '40 clients started at once, each calling as soon as it runs: all served' "$($failed.Count) failed"
Check (-not ((Get-Content $log -Raw) -match 'created after the connection')) '... none taken for a later process'

# --- 3. stalled clients -----------------------------------------------------------
Claim 'docs/security-model.md 5: a client that takes no answers pins at most 64 streams and about 32 KiB per connection'
$before = (ServiceProcess).WorkingSet64
$stall = Start-Process -FilePath $Pipecheck -NoNewWindow -PassThru -RedirectStandardOutput (Join-Path $WorkDir 'stall.out') `
    -ArgumentList @('-stall', '200', '1000', '60', $Kubelet, 'csi-proxy-filesystem-v1')
$until = (Get-Date).AddSeconds(120)
while ((Get-Date) -lt $until -and -not ((Get-Content (Join-Path $WorkDir 'stall.out') -Raw -ErrorAction SilentlyContinue) -match 'stalled:')) {
    Start-Sleep -Milliseconds 500
}
Start-Sleep -Seconds 5
$r = Run $Cli @('filesystem', 'v1', 'PathExists', $body)
Check ($r.Code -eq 0 -and $r.Out -match '"exists":true') 'a normal call is answered while 200 clients stall' $r.Out
$grown = ((ServiceProcess).WorkingSet64 - $before) / 1MB
Check ($grown -lt 64) ("200 stalled clients x 1000 calls: the working set grew by {0:N1} MB (< 64)" -f $grown)
Stop-Process -Id $stall.Id -ErrorAction SilentlyContinue

# --- 5. writes left pending ---------------------------------------------------------
Claim 'docs/design/transport.md: a write that does not complete at once completes to the loop''s port; the thread that started it outlives it'
foreach ($round in 1, 2) {
    $r = Run $Pipecheck @('-flood', '3000', 'csi-proxy-filesystem-v1')
    Check ($r.Code -eq 0) "pipecheck -flood 3000: every answer arrives (round $round)" $r.Out
    if ($round -eq 1) { Start-Sleep -Seconds 20 }
}

# --- 6. the completion ports' waits ---------------------------------------------------
Claim 'docs/design/transport.md: any number of connections, one wait per loop, no polling'
$idle = Start-Process -FilePath $Pipecheck -NoNewWindow -PassThru -ArgumentList (@('-hold', '30000') + (@('csi-proxy-filesystem-v1') * 300))
Start-Sleep -Seconds 8
$cpu0 = (ServiceProcess).TotalProcessorTime
Start-Sleep -Seconds 10
$cpu = ((ServiceProcess).TotalProcessorTime - $cpu0).TotalSeconds
Check ($cpu -lt 0.2) ("300 idle connections: {0:N3} s of service CPU over 10 s (< 0.2)" -f $cpu)
$r = Run $Cli @('filesystem', 'v1', 'PathExists', $body)
Check ($r.Code -eq 0) '... and a call is answered while they are open' $r.Out
Stop-Process -Id $idle.Id -ErrorAction SilentlyContinue
Check (-not ((Get-Content $log -Raw) -match 'GetQueuedCompletionStatusEx failed')) 'no loop''s wait failed'

# --- 7. refusals off the I/O path -------------------------------------------------
Claim 'docs/design/transport.md: caller checks run on workers and refusals reach the Event Log through a bounded queue'
$s0 = Get-Date; Run $Cli @('filesystem', 'v1', 'PathExists', $body) | Out-Null; $t0 = (Get-Date) - $s0
$burst = 1..10 | ForEach-Object {
    Start-Process -FilePath $Pipecheck -NoNewWindow -PassThru -ArgumentList (@('-h2') + (@('csi-proxy-system-v1alpha1') * 50))
}
$s1 = Get-Date; Run $Cli @('filesystem', 'v1', 'PathExists', $body) | Out-Null; $t1 = (Get-Date) - $s1
$burst | Wait-Process -Timeout 120 -ErrorAction SilentlyContinue
Check ($t1.TotalMilliseconds -le [Math]::Max(2 * $t0.TotalMilliseconds, 200)) `
    ("a call during 500 refused connects took {0:N0} ms (before: {1:N0} ms)" -f $t1.TotalMilliseconds, $t0.TotalMilliseconds)
$events = @(Get-WinEvent -FilterHashtable @{ LogName = 'Application'; ProviderName = 'csi-proxy'; StartTime = (Get-Date).AddMinutes(-5) } -ErrorAction SilentlyContinue |
    Where-Object { $_.Message -match 'denied|were not written to the Event Log' })
Check ($events.Count -gt 0) "the Event Log holds refusal records or the queue's summary ($($events.Count))"

# --- 4. upgrade rollback waits for the new service's process -----------------------
Claim 'docs/operators/install.md: rollback only once the new service''s process has exited (exit 3), else exit 4'
$r = Run (Join-Path $Dir 'csi-proxy.exe') @('install', '-log_file=C:\no\such\dir\csi-proxy.log', '-logtostderr=false')
Check ($r.Code -eq 3 -and $r.Out -match 'old binary restored' -and $r.Out -notmatch 'did not stop') `
    'an upgrade whose service stops at once is rolled back once its process exited: exit 3, old binary restored' $r.Out
Check (WaitState 'Running') '... and the previous service runs again'
$r = Run $Cli @('health')
Check ($r.Code -eq 0) '... and serves (health exit 0)' $r.Out

# --- clean up ---------------------------------------------------------------------
Stop-Service csiproxy
Invoke-Native $Exe @('uninstall') | Out-Null
Complete-Tests
