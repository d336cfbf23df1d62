# Packer provisioner, right after install.ps1 (the archive's installer): the release's own
# node self-test (selftest.ps1 from the archive, unpacked in Program Files)
# against the service just installed. Its exit code is this provisioner's: a
# failed check fails the image build. Environment: CSI_PROXY_VERSION.
$ErrorActionPreference = "Stop"
$release = Join-Path $env:ProgramFiles "csi-proxy\releases\$($env:CSI_PROXY_VERSION)"
$selftest = Join-Path $release "selftest.ps1"
if (-not (Test-Path $selftest)) { Write-Error "the archive has no selftest.ps1 ($selftest)"; exit 1 }
& powershell.exe -NoProfile -ExecutionPolicy Bypass -File $selftest
$code = $LASTEXITCODE
if ($code -ne 0) { Write-Error "selftest.ps1 exited ${code}: the node self-test failed"; exit 1 }
Write-Output "selftest.ps1 passed"
exit 0
