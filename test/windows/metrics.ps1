<#
.SYNOPSIS
  -metrics-bind-address on a real Windows node: http.sys routing by Host and
  by interface, and a clean stop, which Wine cannot show. Status: written,
  NOT RUN by the team (CI is Linux + Wine).

.DESCRIPTION
  Run from an elevated PowerShell on a throw-away node, with the build's
  csi-proxy.exe in -Dir. It installs the service the way upstream's Windows
  CI starts it (-metrics-bind-address=localhost:PORT), and checks, under
  four claims of docs/operators/health-and-metrics.md:
    1. localhost:PORT as upstream's CI uses it: the service runs, the log
       names http://localhost:PORT/metrics; over 127.0.0.1 every loopback
       spelling of the Host is served (200 and the metrics): localhost:PORT,
       127.0.0.1:PORT, [::1]:PORT, another case, and localhost without a
       port (which Wine's http.sys cannot route); over [::1] (where
       "localhost" often resolves first on Windows) Host localhost:PORT and
       [::1]:PORT; Invoke-WebRequest http://localhost:PORT/metrics (the URL
       upstream's integration suite fetches) answers 200;
    2. a Host that names anything else (example.com, 10.1.2.3, 127.0.0.2,
       localhost.evil.example) is answered 400 within 5 s, never left
       waiting; another path 404;
    3. http.sys opens the port on every address of the node: it lists the
       strong wildcard http://+:PORT/ (netsh http show servicestate), and a
       request to a non-loopback address of the node reaches the port and
       csi-proxy answers 403 (it arrived on an interface not served), so the
       firewall, not the flag, keeps the port off the network;
    4. a clean stop with metrics on: Stop-Service stops within 30 s with
       "exiting with code 0" logged and no Application Error for
       csi-proxy.exe; the port then serves no metrics; then uninstall.
  It reports through common.ps1 (every check under the claim of
  docs/operators/health-and-metrics.md it proves); run-all.ps1 runs it
  before it installs its own csiproxy service. The service is uninstalled
  at the end even when a step throws. Record the result (date, Windows
  build, output) in README.md.
#>
param(
    [Parameter(Mandatory = $true)] [string] $Dir,
    [int] $Port = 8888,
    [string] $WorkDir = "$env:TEMP\csi-proxy-metrics"
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$Exe = Join-Path $Dir 'csi-proxy.exe'
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests, Invoke-Native

function WaitState([string] $state, [int] $seconds = 30) {
    $until = (Get-Date).AddSeconds($seconds)
    while ((Get-Date) -lt $until) {
        $s = Get-Service csiproxy -ErrorAction SilentlyContinue
        if ($s -and "$($s.Status)" -eq $state) { return $true }
        Start-Sleep -Milliseconds 200
    }
    return $false
}
function LogText { if (Test-Path -LiteralPath $log) { Get-Content -LiteralPath $log -Raw } else { '' } }
function LogTail { if (Test-Path -LiteralPath $log) { (Get-Content -LiteralPath $log -Tail 5) -join "`n" } else { "no log at $log" } }

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
$doc = 'docs/operators/health-and-metrics.md'

try {
    # --- install and start with upstream's CI flag ---------------------------------
    Claim "${doc}: -metrics-bind-address=localhost:$Port (as upstream's Windows CI starts csi-proxy) serves /metrics on loopback"
    Invoke-Native $Exe @('uninstall') | Out-Null
    $r = Invoke-Native $Exe @('install', "-log_file=$log", '-logtostderr=false', '-v', '2', "-metrics-bind-address=localhost:$Port")
    Check ($r.Code -eq 0) "csi-proxy.exe install -metrics-bind-address=localhost:$Port" $r.Text
    $started = Get-Date
    try { Start-Service csiproxy } catch { Write-TestLine "# Start-Service: $($_.Exception.Message)" }
    if (-not (WaitState 'Running')) {
        Bad 'the service runs' (LogTail)
        Complete-Tests   # exits; the finally below uninstalls
    }
    Ok 'the service runs'
    $until = (Get-Date).AddSeconds(30)
    while ((Get-Date) -lt $until -and (Probe '127.0.0.1' "localhost:$Port") -ne '200 metrics') { Start-Sleep -Milliseconds 300 }
    Check ((LogText) -match "metrics: serving http://localhost:$Port/metrics") "the log names http://localhost:$Port/metrics" (LogTail)

    # every loopback spelling of the Host over 127.0.0.1
    foreach ($h in @("localhost:$Port", "127.0.0.1:$Port", "[::1]:$Port", "LocalHost:$Port", 'localhost')) {
        $got = Probe '127.0.0.1' $h
        Check ($got -eq '200 metrics') "over 127.0.0.1, Host ${h}: 200 and the metrics" $got
    }
    # over [::1], where "localhost" often resolves first on Windows
    if ([Net.Sockets.Socket]::OSSupportsIPv6) {
        foreach ($h in @("localhost:$Port", "[::1]:$Port")) {
            $got = Probe '::1' $h
            Check ($got -eq '200 metrics') "over [::1], Host ${h}: 200 and the metrics" $got
        }
    } else {
        Skip 'over [::1], Host localhost and [::1]: 200 and the metrics' 'IPv6 is not enabled on this node'
    }
    # the URL upstream's integration suite fetches
    try {
        $w = Invoke-WebRequest -UseBasicParsing -TimeoutSec 10 "http://localhost:$Port/metrics"
        Check ($w.StatusCode -eq 200 -and $w.Content -match 'grpc_server_handled_total|csi_proxy_') "Invoke-WebRequest http://localhost:$Port/metrics: 200" "$($w.StatusCode)"
    } catch {
        Bad "Invoke-WebRequest http://localhost:$Port/metrics: 200" $_.Exception.Message
    }

    # --- any other Host: 400 at once; another path: 404 ---------------------------
    Claim "${doc}: a request whose Host names anything but this loopback endpoint is answered 400 at once (never left waiting); other paths 404"
    foreach ($h in @("example.com:$Port", "10.1.2.3:$Port", "127.0.0.2:$Port", "localhost.evil.example:$Port")) {
        $t0 = Get-Date
        $got = Probe '127.0.0.1' $h
        $ms = [int]((Get-Date) - $t0).TotalMilliseconds
        Check ($got -eq '400 -' -and $ms -lt 5000) "Host $h on loopback: 400 within 5 s" "$got after $ms ms"
    }
    $got = Probe '127.0.0.1' "localhost:$Port" '/other'
    Check ($got -eq '404 -') 'another path: 404' $got

    # --- http.sys opens the port on every address; csi-proxy refuses what arrives there ---
    Claim "${doc}: http.sys opens the port on every address of the node (strong wildcard, no IP listen list); a request on another interface gets 403, so the firewall, not the flag, keeps the port off the network"
    $ss = Invoke-Native 'netsh.exe' @('http', 'show', 'servicestate', 'view=requestq')
    Check ($ss.Text -match "(?i)HTTP://\+:$Port/") "http.sys lists the strong wildcard http://+:$Port/" $ss.Text
    $il = Invoke-Native 'netsh.exe' @('http', 'show', 'iplisten')
    Write-TestLine "# http.sys IP listen list: $($il.Out -join ' ')"
    $other = Get-NetIPAddress -AddressFamily IPv4 -ErrorAction SilentlyContinue |
        Where-Object { $_.IPAddress -notlike '127.*' -and $_.IPAddress -notlike '169.254.*' -and "$($_.AddressState)" -eq 'Preferred' } |
        Select-Object -First 1
    if ($other) {
        $got = Probe $other.IPAddress "localhost:$Port"
        Check ($got -eq '403 -') "a request to $($other.IPAddress):$Port (http.sys listens there too): 403 from csi-proxy" $got
    } else {
        Skip 'a request to a non-loopback address of the node: 403 from csi-proxy' 'no preferred non-loopback IPv4 address'
    }

    # --- stop with metrics on ---------------------------------------------------------
    Claim "${doc} and README ""Installing on a node"": with metrics on, the service stops cleanly (exit 0, no crash) and the port is released"
    try { Stop-Service csiproxy } catch { Write-TestLine "# Stop-Service: $($_.Exception.Message)" }
    Check (WaitState 'Stopped' 30) 'Stop-Service with metrics on: stopped within 30 s'
    Check ((LogText) -match 'exiting with code 0') '... "exiting with code 0" logged' (LogTail)
    $crash = @(Get-WinEvent -FilterHashtable @{ LogName = 'Application'; ProviderName = 'Application Error'; StartTime = $started } -ErrorAction SilentlyContinue |
        Where-Object { $_.Message -like '*csi-proxy.exe*' })
    Check ($crash.Count -eq 0) '... and no Application Error for csi-proxy.exe' $(if ($crash.Count) { $crash[0].Message } else { '' })
    $got = Probe '127.0.0.1' "localhost:$Port"
    Check ($got -ne '200 metrics') '... and the port serves no metrics afterwards' $got
    $r = Invoke-Native $Exe @('uninstall')
    Check ($r.Code -eq 0 -and -not (Get-Service csiproxy -ErrorAction SilentlyContinue)) 'csi-proxy.exe uninstall' $r.Text
} finally {
    # never leave a service behind: run-all installs its own next
    if (Get-Service csiproxy -ErrorAction SilentlyContinue) {
        Invoke-Native $Exe @('uninstall') | ForEach-Object { Write-TestLine "# cleanup uninstall: exit $($_.Code) $($_.Text)" }
    }
}
Complete-Tests
