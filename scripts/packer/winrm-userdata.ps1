<powershell>
# EC2 user data of the Packer build instance (not of the nodes): WinRM over HTTPS
# (5986) with a self-signed certificate made here, Basic authentication over TLS only,
# no HTTP listener. prepare-image.ps1 removes the listener, the certificate and the
# firewall rule before the image is taken.
$ErrorActionPreference = "Stop"

# The instance's names and addresses, from IMDSv2.
$token = Invoke-RestMethod -Method Put -Uri "http://169.254.169.254/latest/api/token" `
    -Headers @{ "X-aws-ec2-metadata-token-ttl-seconds" = "300" } -UseBasicParsing
function Get-Imds([string]$Path) {
    try {
        return (Invoke-RestMethod -Uri "http://169.254.169.254/latest/meta-data/$Path" `
                -Headers @{ "X-aws-ec2-metadata-token" = $token } -UseBasicParsing)
    } catch { return $null }
}
$names = @(
    (Get-Imds "local-hostname"), (Get-Imds "local-ipv4"),
    (Get-Imds "public-hostname"), (Get-Imds "public-ipv4"), $env:COMPUTERNAME
) | Where-Object { $_ } | Select-Object -Unique

$cert = New-SelfSignedCertificate -DnsName $names -CertStoreLocation "Cert:\LocalMachine\My" `
    -FriendlyName "packer-winrm" -NotAfter (Get-Date).AddDays(2)

Set-WSManQuickConfig -Force -SkipNetworkProfileCheck
Set-Item -Path WSMan:\localhost\Service\AllowUnencrypted -Value $false
Set-Item -Path WSMan:\localhost\Service\Auth\Basic -Value $true
Set-Item -Path WSMan:\localhost\MaxTimeoutms -Value 1800000
Set-Item -Path WSMan:\localhost\Shell\MaxMemoryPerShellMB -Value 1024

Get-ChildItem WSMan:\localhost\Listener |
    Where-Object { $_.Keys -contains "Transport=HTTP" } |
    Remove-Item -Recurse -Force
New-Item -Path WSMan:\localhost\Listener -Transport HTTPS -Address * `
    -CertificateThumbPrint $cert.Thumbprint -Force | Out-Null

New-NetFirewallRule -Name "packer-winrm-https" -DisplayName "Packer WinRM over HTTPS (5986)" `
    -Enabled True -Direction Inbound -Profile Any -Action Allow -Protocol TCP -LocalPort 5986 | Out-Null
Restart-Service winrm
</powershell>
