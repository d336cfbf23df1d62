# Packer provisioner, after the install and again after the restart: the csiproxy
# service runs, its executable prints the expected version, and
# `csi-proxy-cli.exe health` passes (every configured pipe answers), within
# CSI_PROXY_HEALTH_TIMEOUT seconds. Environment: CSI_PROXY_VERSION,
# CSI_PROXY_HEALTH_TIMEOUT.
$ErrorActionPreference = "Stop"
$deadline = (Get-Date).AddSeconds([int]$env:CSI_PROXY_HEALTH_TIMEOUT)

$svc = Get-CimInstance -ClassName Win32_Service -Filter "Name='csiproxy'"
if (-not $svc) { Write-Error "no csiproxy service"; exit 1 }
if ($svc.StartMode -ne "Auto") { Write-Error "csiproxy starts $($svc.StartMode), not Auto"; exit 1 }
# The executable: the quoted first word of the service's command line, or up to ".exe".
if ($svc.PathName -match '^"([^"]+)"') { $exe = $Matches[1] }
elseif ($svc.PathName -match '^(.+?\.exe)') { $exe = $Matches[1] }
else { Write-Error "cannot read the executable from: $($svc.PathName)"; exit 1 }
Write-Output "service csiproxy: $($svc.PathName)"

$printed = (& $exe -version | Out-String).Trim()
if ($printed -ne "csi-proxy version $($env:CSI_PROXY_VERSION)") {
    Write-Error "$exe -version printed '$printed', expected 'csi-proxy version $($env:CSI_PROXY_VERSION)'"
    exit 1
}
Write-Output $printed

$cli = Join-Path (Split-Path -Parent $exe) "csi-proxy-cli.exe"
if (-not (Test-Path $cli)) {
    $cli = Join-Path $env:ProgramFiles "csi-proxy\releases\$($env:CSI_PROXY_VERSION)\csi-proxy-cli.exe"
}
while ($true) {
    $state = (Get-Service -Name csiproxy).Status
    if ($state -eq "Running") {
        & $cli health
        if ($LASTEXITCODE -eq 0) { break }
        $why = "csi-proxy-cli.exe health exited $LASTEXITCODE"
    } else {
        $why = "service csiproxy is $state"
    }
    if ((Get-Date) -gt $deadline) { Write-Error "csi-proxy not healthy: $why"; exit 1 }
    Start-Sleep -Seconds 3
}
Write-Output "csiproxy running and healthy"
exit 0
