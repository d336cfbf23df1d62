# Packer provisioner: check the uploaded release archive, unpack it, install csi-proxy
# with the node script (replacing the csi-proxy the AMI ships). verify.ps1 then checks
# the service. Environment (set by the template): CSI_PROXY_ARCHIVE,
# CSI_PROXY_ARCHIVE_SHA256, CSI_PROXY_VERSION, CSI_PROXY_HAS_CONFIG,
# CSI_PROXY_CONFIG_UPLOAD (the uploaded config file), CSI_PROXY_INSTALL_ARGS, and
# CSI_PROXY_GROUPS, which install.cmd reads itself (local groups to create).
$ErrorActionPreference = "Stop"
$archive = $env:CSI_PROXY_ARCHIVE
$version = $env:CSI_PROXY_VERSION

# 1. The archive is the one make dist wrote: its SHA-256 against <archive>.sha256.
$got = (Get-FileHash -Algorithm SHA256 -Path $archive).Hash.ToLowerInvariant()
if ($got -ne $env:CSI_PROXY_ARCHIVE_SHA256.ToLowerInvariant()) {
    Write-Error "csi-proxy archive $archive has SHA-256 $got, expected $($env:CSI_PROXY_ARCHIVE_SHA256)"
    exit 1
}
Write-Output "archive SHA-256 ok: $got"

# 2. Unpack where the release stays (the service may run the exe from here).
$release = Join-Path $env:ProgramFiles "csi-proxy\releases\$version"
if (Test-Path $release) { Remove-Item -Recurse -Force $release }
New-Item -ItemType Directory -Force -Path $release | Out-Null
Expand-Archive -Path $archive -DestinationPath $release
Remove-Item -Force $archive

# 3. Every file against SHA256SUMS ("<hex>  <name>" lines), and nothing missing.
$sums = Get-Content -Path (Join-Path $release "SHA256SUMS")
if ($sums.Count -lt 3) { Write-Error "SHA256SUMS lists $($sums.Count) files"; exit 1 }
foreach ($line in $sums) {
    if ($line -notmatch '^([0-9a-f]{64})  (\S+)$') { Write-Error "bad SHA256SUMS line: $line"; exit 1 }
    $want = $Matches[1]; $name = $Matches[2]
    $h = (Get-FileHash -Algorithm SHA256 -Path (Join-Path $release $name)).Hash.ToLowerInvariant()
    if ($h -ne $want) { Write-Error "$name has SHA-256 $h, SHA256SUMS says $want"; exit 1 }
}
Write-Output "SHA256SUMS ok: $($sums.Count) files"

# 4. The configuration, where the service reads it by default.
if ($env:CSI_PROXY_HAS_CONFIG -eq "1") {
    # The folder is made with a protected DACL first (SYSTEM and Administrators only, nothing
    # inherited from ProgramData, where every user may make files): the service refuses a
    # configuration file that anyone else could change, or whose folder they could.
    # (csi-proxy.exe install, run by install.cmd below, checks and makes the same folder.)
    $dir = Join-Path $env:ProgramData "csi-proxy"
    New-Item -ItemType Directory -Force -Path $dir | Out-Null
    $acl = New-Object System.Security.AccessControl.DirectorySecurity
    $acl.SetSecurityDescriptorSddlForm("D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)")
    Set-Acl -Path $dir -AclObject $acl
    Copy-Item -Force -Path $env:CSI_PROXY_CONFIG_UPLOAD -Destination (Join-Path $dir "config.yaml")
    Write-Output "installed $dir\config.yaml"
}

# 5. The node install script: takes over an existing csiproxy service (the AMI's) or
#    creates it, and starts it. Run through cmd, as an operator would. install.cmd turns
#    CSI_PROXY_CONFIG into a -config flag in the service's command line: it must not be
#    set here (the config is at the default path, which the service, install's health
#    wait and csi-proxy-cli.exe health all read, and the upload directory is deleted
#    before the image is taken); nor CSI_PROXY_DIR (a new install goes to upstream's
#    C:\etc\kubernetes\node\bin).
Remove-Item -Path Env:CSI_PROXY_CONFIG, Env:CSI_PROXY_DIR -ErrorAction SilentlyContinue
$install = Join-Path $release "install.cmd"
if (-not (Test-Path $install)) { Write-Error "the archive has no install.cmd"; exit 1 }
& cmd.exe /c "`"$install`" $($env:CSI_PROXY_INSTALL_ARGS)"
if ($LASTEXITCODE -ne 0) { Write-Error "install.cmd exited $LASTEXITCODE"; exit 1 }

# 6. A csi-proxy.exe the AMI ships elsewhere (EKS keeps its binaries under
#    Program Files\Amazon\EKS) is replaced by ours, the original kept beside it, so that
#    nothing on the node can start upstream's again.
$ours = Join-Path $release "csi-proxy.exe"
Get-ChildItem -Path (Join-Path $env:ProgramFiles "Amazon") -Recurse -Filter "csi-proxy.exe" -ErrorAction SilentlyContinue |
    ForEach-Object {
        $orig = "$($_.FullName).aws-original"
        if (-not (Test-Path $orig)) { Copy-Item -Path $_.FullName -Destination $orig }
        Copy-Item -Force -Path $ours -Destination $_.FullName
        Write-Output "replaced $($_.FullName) (kept $orig)"
    }
Write-Output "csi-proxy $version installed"
exit 0
