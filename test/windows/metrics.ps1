<#
.SYNOPSIS
  -metrics-bind-address on a real Windows node: http.sys routing by Host and
  by interface, and a clean stop, which Wine cannot show. Status: written,
  NOT RUN by the team (CI is Linux + Wine).

.DESCRIPTION
  Run from an elevated PowerShell on a throw-away node, with the build's
  csi-proxy.exe in -Dir. It installs the service the way upstream's Windows
  CI starts it (-metrics-bind-address=localhost:PORT), and checks:
    1. the log names http://localhost:PORT/metrics, and http.sys shows the
       strong wildcard http://+:PORT/ registered (netsh http show
       servicestate);
    2. over 127.0.0.1, every loopback spelling of the Host is served (200 and
       the metrics): localhost:PORT, 127.0.0.1:PORT, [::1]:PORT, another
       case, and localhost without a port (which Wine's http.sys cannot
       route);
    3. over [::1] (where "localhost" often resolves first on Windows):
       Host localhost:PORT and [::1]:PORT served;
    4. a Host that names anything else (example.com, 10.1.2.3, 127.0.0.2,
       localhost.evil.example) is answered 400 within 5 s, never left waiting;
       another path 404;
    5. Invoke-WebRequest http://localhost:PORT/metrics (the URL upstream's
       integration suite fetches) answers 200;
    6. http.sys opens the port on every address of the node (no IP listen
       list): a request to a non-loopback address of the node reaches the
       port and csi-proxy answers 403 (it arrived on an interface not
       served), so the firewall, not the flag, keeps the port off the
       network;
    7. Stop-Service stops within 30 s with "exiting with code 0" logged and
       no Application Error for csi-proxy.exe; the port then answers no
       scrape; then uninstall.
  Prints "ok - ..." / "not ok - ..." and "N passed, N failed"; exits 1 on
  any failure. Record the result (date, Windows build, output) in README.md.
#>
param(
    [Parameter(Mandatory = $true)] [string] $Dir,
    [int] $Port = 8888,
    [string] $WorkDir = "$env:TEMP\csi-proxy-metrics"
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$Exe = Join-Path $Dir 'csi-proxy.exe'
$script:pass = 0
$script:fail = 0
function Ok([string] $name) { $script:pass++; Write-Output "ok - $name" }
function Bad([string] $name, [string] $why) { $script:fail++; Write-Output "not ok - $name"; if ($why) { Write-Output "    $why" } }
function Check([bool] $cond, [string] $name, [string] $why = '') { if ($cond) { Ok $name } else { Bad $name $why } }
function Run([string] $file, [string[]] $argv) {
    $out = @(& $file @argv 2>&1 | ForEach-Object { "$_" }) -join "`n"
    return @{ Code = $LASTEXITCODE; Out = $out }
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

# Probe ADDR HOST [PATH]: one HTTP/1.1 request over a plain socket to ADDR
# (an IP literal) on $Port with exactly this Host header. Returns
# "STATUS metrics" / "STATUS -" (the body holds a csi-proxy metric or not),
# "timeout" (nothing within 5 s), "refused" or "error: ...".
function Probe([string] $addr, [string] $hostHeader, [string] $path = '/metrics') {
    $ip = [Net.IPAddress]::Parse($addr)
    $c = New-Object Net.Sockets.TcpClient($ip.AddressFamily)
    try {
        $c.ReceiveTimeout = 5000
        $c.SendTimeout = 5000
        try { $c.Connect($ip, $Port) } catch { return 'refused' }
        $s = $c.GetStream()
        $req = [Text.Encoding]::ASCII.GetBytes("GET $path HTTP/1.1`r`nHost: $hostHeader`r`nConnection: close`r`n`r`n")
        $s.Write($req, 0, $req.Length)
        $buf = New-Object byte[] 262144
        $len = 0
        try {
            while ($len -lt $buf.Length) {
                $n = $s.Read($buf, $len, $buf.Length - $len)
                if ($n -le 0) { break }
                $len += $n
            }
        } catch {
            if ($len -eq 0) { return 'timeout' }
        }
        $text = [Text.Encoding]::ASCII.GetString($buf, 0, $len)
        if ($text -match '^HTTP/1\.\d (\d{3})') {
            $body = if ($text -match 'csi_proxy_connections_open') { 'metrics' } else { '-' }
            return "$($Matches[1]) $body"
        }
        return "error: no status line in '$($text.Substring(0, [Math]::Min(80, $text.Length)))'"
    } catch {
        return "error: $($_.Exception.Message)"
    } finally {
        $c.Close()
    }
}

New-Item -ItemType Directory -Force -Path $WorkDir | Out-Null
$log = Join-Path $WorkDir 'csi-proxy.log'
Remove-Item -Force -ErrorAction SilentlyContinue $log

# --- install and start with upstream's CI flag ---------------------------------
& $Exe uninstall | Out-Null
$r = Run $Exe @('install', "-log_file=$log", '-logtostderr=false', '-v', '2', "-metrics-bind-address=localhost:$Port")
Check ($r.Code -eq 0) "install with -metrics-bind-address=localhost:$Port" $r.Out
$started = Get-Date
Start-Service csiproxy
Check (WaitState 'Running') 'the service runs'
$until = (Get-Date).AddSeconds(30)
while ((Get-Date) -lt $until -and (Probe '127.0.0.1' "localhost:$Port") -ne '200 metrics') { Start-Sleep -Milliseconds 300 }

# --- 1. what is registered ----------------------------------------------------------
Check ((Get-Content $log -Raw) -match "metrics: serving http://localhost:$Port/metrics") 'the log names http://localhost:PORT/metrics'
$ss = (netsh http show servicestate view=requestq) -join "`n"
Check ($ss -match "(?i)HTTP://\+:$Port/") "http.sys lists the strong wildcard http://+:$Port/" $ss

# --- 2. every loopback spelling over 127.0.0.1 --------------------------------------
foreach ($h in @("localhost:$Port", "127.0.0.1:$Port", "[::1]:$Port", "LocalHost:$Port", 'localhost')) {
    $got = Probe '127.0.0.1' $h
    Check ($got -eq '200 metrics') "over 127.0.0.1, Host $h`: 200 and the metrics" $got
}

# --- 3. over [::1] ------------------------------------------------------------------
if ([Net.Sockets.Socket]::OSSupportsIPv6) {
    foreach ($h in @("localhost:$Port", "[::1]:$Port")) {
        $got = Probe '::1' $h
        Check ($got -eq '200 metrics') "over [::1], Host $h`: 200 and the metrics" $got
    }
} else {
    Write-Output 'ok - over [::1] # SKIP IPv6 is not enabled on this node'
}

# --- 4. any other Host: 400 at once; another path: 404 ---------------------------
foreach ($h in @("example.com:$Port", "10.1.2.3:$Port", "127.0.0.2:$Port", "localhost.evil.example:$Port")) {
    $t0 = Get-Date
    $got = Probe '127.0.0.1' $h
    $ms = [int]((Get-Date) - $t0).TotalMilliseconds
    Check ($got -eq '400 -' -and $ms -lt 5000) "Host $h on loopback: 400 in $ms ms" $got
}
$got = Probe '127.0.0.1' "localhost:$Port" '/other'
Check ($got -eq '404 -') 'another path: 404' $got

# --- 5. what upstream's integration suite fetches ----------------------------------
try {
    $w = Invoke-WebRequest -UseBasicParsing -TimeoutSec 10 "http://localhost:$Port/metrics"
    Check ($w.StatusCode -eq 200 -and $w.Content -match 'grpc_server_handled_total|csi_proxy_') 'Invoke-WebRequest http://localhost:PORT/metrics: 200'
} catch {
    Bad 'Invoke-WebRequest http://localhost:PORT/metrics: 200' $_.Exception.Message
}

# --- 6. the port is open on every address; csi-proxy refuses what arrives there ---
$other = Get-NetIPAddress -AddressFamily IPv4 -ErrorAction SilentlyContinue |
    Where-Object { $_.IPAddress -notlike '127.*' -and $_.IPAddress -notlike '169.254.*' -and "$($_.AddressState)" -eq 'Preferred' } |
    Select-Object -First 1
if ($other) {
    $got = Probe $other.IPAddress "localhost:$Port"
    Check ($got -eq '403 -') "a request to $($other.IPAddress):$Port (http.sys listens there too): 403 from csi-proxy" $got
    $il = (netsh http show iplisten) -join "`n"
    Write-Output "# http.sys IP listen list: $($il -replace "`n", ' ')"
} else {
    Write-Output 'ok - a request to a non-loopback address: 403 # SKIP no non-loopback IPv4 address'
}

# --- 7. stop with metrics on ---------------------------------------------------------
Stop-Service csiproxy
Check (WaitState 'Stopped' 30) 'Stop-Service with metrics on: stopped within 30 s'
Check ((Get-Content $log -Raw) -match 'exiting with code 0') '... "exiting with code 0" logged' ((Get-Content $log -Tail 5) -join "`n")
$crash = @(Get-WinEvent -FilterHashtable @{ LogName = 'Application'; ProviderName = 'Application Error'; StartTime = $started } -ErrorAction SilentlyContinue |
    Where-Object { $_.Message -like '*csi-proxy.exe*' })
Check ($crash.Count -eq 0) '... and no Application Error for csi-proxy.exe' (($crash | Select-Object -First 1).Message)
$got = Probe '127.0.0.1' "localhost:$Port"
Check ($got -ne '200 metrics') '... and the port serves no metrics afterwards' $got
$r = Run $Exe @('uninstall')
Check ($r.Code -eq 0) 'csi-proxy.exe uninstall' $r.Out

Write-Output "$script:pass passed, $script:fail failed"
if ($script:fail -gt 0) { exit 1 }
