# Bakes csi-proxy (this repository's release archive) into an Amazon EKS-optimized
# Windows AMI, replacing the csi-proxy the AMI ships.
#
#   make dist
#   packer build -var archive_path=build/dist/csi-proxy-<version>-windows-amd64.zip \
#                -var kubernetes_version=1.29 -var windows_version=2022 -var windows_edition=Core \
#                -var region=us-west-2 scripts/packer
#
# Written for Packer 1.6.6 (Debian 12's): HCL2 without `data` blocks (the source AMI is
# found with source_ami_filter) and only built-in builders and provisioners. Variables are
# in variables.pkr.hcl; example values in example.pkrvars.hcl.
#
# Steps: start the latest EKS-optimized Windows Server <version> <edition> AMI for the
# Kubernetes version; user data (winrm-userdata.ps1) sets up WinRM over HTTPS; upload the
# archive; install.ps1 checks its SHA-256 against <archive>.sha256, unpacks it, checks
# every file against SHA256SUMS, installs the optional config file where the service reads
# it by default (C:\ProgramData\csi-proxy\config.yaml: no -config flag), runs the node
# install script (install.cmd, which creates local_groups first), and that waits for the
# csiproxy service to run and `csi-proxy-cli.exe health` to pass; restart Windows;
# verify.ps1 checks the same again, and the version; prepare-image.ps1 leaves the instance
# ready for EC2Launch's sysprep (v1 or v2 on 2019, v2 only on 2022 and 2025) and removes
# the build's WinRM listener; Packer then stops the instance and registers the AMI.

locals {
  archive_name = basename(var.archive_path)
  # "<hex>  <name>" as make dist writes it (sha256sum format).
  archive_sha256 = split(" ", trimspace(file("${var.archive_path}.sha256")))[0]
  # csi-proxy-<version>-windows-amd64.zip -> <version>
  version    = trimsuffix(trimprefix(local.archive_name, "csi-proxy-"), "-windows-amd64.zip")
  build_time = formatdate("YYYYMMDDhhmmss", timestamp())
  ami_name   = "${var.ami_name_prefix}-${var.windows_version}-${lower(var.windows_edition)}-${var.kubernetes_version}-${local.build_time}"
  # Without a config file, an empty placeholder is uploaded and not installed (a file
  # provisioner cannot be made conditional in Packer 1.6).
  config_source = var.config_path != "" ? var.config_path : "${path.root}/no-config.yaml"
  has_config    = var.config_path != "" ? "1" : "0"
  staging       = "C:\\Windows\\Temp\\csi-proxy-packer"
}

source "amazon-ebs" "eks_windows" {
  region        = var.region
  instance_type = var.instance_type
  subnet_id     = var.subnet_id
  vpc_id        = var.vpc_id

  associate_public_ip_address           = var.associate_public_ip_address
  temporary_security_group_source_cidrs = var.winrm_allowed_cidrs

  source_ami_filter {
    filters = {
      name                = "Windows_Server-${var.windows_version}-English-${var.windows_edition}-EKS_Optimized-${var.kubernetes_version}-*"
      architecture        = "x86_64"
      root-device-type    = "ebs"
      virtualization-type = "hvm"
      state               = "available"
    }
    owners      = ["amazon"]
    most_recent = true
  }

  ami_name        = local.ami_name
  ami_description = "EKS-optimized Windows Server ${var.windows_version} ${var.windows_edition} (Kubernetes ${var.kubernetes_version}) with csi-proxy ${local.version} (csi-proxy in C)"

  launch_block_device_mappings {
    device_name           = "/dev/sda1"
    volume_size           = var.root_volume_size
    volume_type           = "gp3"
    iops                  = 3000
    throughput            = 125
    delete_on_termination = true
  }

  # WinRM over TLS, set up by the user data. The certificate is self-signed and made on
  # the instance, so Packer cannot verify it (winrm_insecure): the channel is encrypted,
  # and the temporary security group admits only winrm_allowed_cidrs. The password is
  # the one EC2 generates, fetched by Packer with its temporary key pair.
  communicator   = "winrm"
  user_data_file = "${path.root}/winrm-userdata.ps1"
  winrm_username = "Administrator"
  winrm_use_ssl  = true
  winrm_insecure = true
  winrm_port     = 5986
  winrm_timeout  = "30m"

  run_tags = {
    Name = "packer-${local.ami_name}"
  }
  tags = {
    Name                 = local.ami_name
    "csi-proxy:version"  = local.version
    "kubernetes:version" = var.kubernetes_version
  }
}

build {
  sources = ["source.amazon-ebs.eks_windows"]

  provisioner "powershell" {
    inline = ["New-Item -ItemType Directory -Force -Path '${local.staging}' | Out-Null"]
  }

  provisioner "file" {
    source      = var.archive_path
    destination = "${local.staging}\\${local.archive_name}"
  }

  provisioner "file" {
    source      = local.config_source
    destination = "${local.staging}\\config.yaml"
  }

  provisioner "powershell" {
    script = "${path.root}/install.ps1"
    environment_vars = [
      "CSI_PROXY_ARCHIVE=${local.staging}\\${local.archive_name}",
      "CSI_PROXY_ARCHIVE_SHA256=${local.archive_sha256}",
      "CSI_PROXY_VERSION=${local.version}",
      "CSI_PROXY_HAS_CONFIG=${local.has_config}",
      "CSI_PROXY_CONFIG_UPLOAD=${local.staging}\\config.yaml",
      "CSI_PROXY_INSTALL_ARGS=${var.install_args}",
      "CSI_PROXY_GROUPS=${var.local_groups}",
    ]
  }

  # The release's node self-test against the service install.cmd set up; a
  # failed check fails the build.
  provisioner "powershell" {
    script = "${path.root}/selftest-node.ps1"
    environment_vars = [
      "CSI_PROXY_VERSION=${local.version}",
    ]
  }

  provisioner "windows-restart" {
    restart_timeout = "30m"
  }

  provisioner "powershell" {
    script = "${path.root}/verify.ps1"
    environment_vars = [
      "CSI_PROXY_VERSION=${local.version}",
      "CSI_PROXY_HEALTH_TIMEOUT=${var.health_timeout_seconds}",
    ]
  }

  provisioner "powershell" {
    script = "${path.root}/prepare-image.ps1"
    environment_vars = [
      "CSI_PROXY_STAGING=${local.staging}",
      "CSI_PROXY_WINDOWS_VERSION=${var.windows_version}",
    ]
  }
}
