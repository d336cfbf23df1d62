# Packer provisioner, last: leave the instance ready for EC2Launch's sysprep, so that
# every node started from the AMI gets its own identity, password and user data run.
# EC2Launch v2 (Windows Server 2022 and 2025 AMIs, some 2019 ones): ec2launch.exe
# sysprep; EC2Launch v1 (Windows Server 2019 AMIs): InitializeInstance.ps1 -Schedule
# and SysprepInstance.ps1 -NoShutdown. On 2022 and 2025 (CSI_PROXY_WINDOWS_VERSION)
# EC2Launch v2 is the only launch agent Amazon installs ("EC2Launch v2 comes
# pre-installed on Amazon Windows Server 2022 and 2025 AMIs", Amazon EC2 User Guide,
# "Install the latest version of EC2Config"): a v1 left there is not used. Neither shuts down: Packer stops the instance and
# takes the image. The build's WinRM listener, certificate and firewall rule are
# removed at the end (the private key must not stay in every node's image).
$ErrorActionPreference = "Stop"

if ($env:CSI_PROXY_STAGING -and (Test-Path $env:CSI_PROXY_STAGING)) {
    Remove-Item -Recurse -Force $env:CSI_PROXY_STAGING
}
$v2 = Join-Path $env:ProgramFiles "Amazon\EC2Launch\ec2launch.exe"
$v1 = Join-Path $env:ProgramData "Amazon\EC2-Windows\Launch\Scripts"
if (Test-Path $v2) {
    Write-Output "EC2Launch v2: ec2launch.exe sysprep --shutdown=false"
    & $v2 sysprep --shutdown=false
    if ($LASTEXITCODE -ne 0) { Write-Error "ec2launch sysprep exited $LASTEXITCODE"; exit 1 }
} elseif ($env:CSI_PROXY_WINDOWS_VERSION -in @('2022', '2025')) {
    Write-Error "Windows Server $($env:CSI_PROXY_WINDOWS_VERSION): EC2Launch v2 ($v2) is not installed"
    exit 1
} elseif (Test-Path (Join-Path $v1 "InitializeInstance.ps1")) {
    Write-Output "EC2Launch v1: InitializeInstance.ps1 -Schedule; SysprepInstance.ps1 -NoShutdown"
    & (Join-Path $v1 "InitializeInstance.ps1") -Schedule
    & (Join-Path $v1 "SysprepInstance.ps1") -NoShutdown
} else {
    Write-Error "neither EC2Launch v2 ($v2) nor EC2Launch v1 ($v1) is installed"
    exit 1
}

# Last, as aws-samples/amazon-eks-custom-amis does: the build's WinRM firewall rule,
# certificate and listener. This session runs over them; the connection already open
# stays up, and the certificate expires two days after it was made in any case.
Remove-NetFirewallRule -Name "packer-winrm-https" -ErrorAction SilentlyContinue
Get-ChildItem Cert:\LocalMachine\My | Where-Object { $_.FriendlyName -eq "packer-winrm" } |
    Remove-Item -Force -ErrorAction SilentlyContinue
Get-ChildItem WSMan:\localhost\Listener |
    Where-Object { $_.Keys -contains "Transport=HTTPS" } |
    Remove-Item -Recurse -Force -ErrorAction SilentlyContinue

exit 0
