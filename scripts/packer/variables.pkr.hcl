# Variables of the csi-proxy EKS Windows AMI template (csi-proxy-eks-windows.pkr.hcl).
# Values: -var name=value, or a -var-file (see example.pkrvars.hcl).

variable "region" {
  type        = string
  description = "AWS region to build in; the AMI is registered there."
  default     = "us-east-1"
}

variable "kubernetes_version" {
  type        = string
  description = "Kubernetes minor version of the EKS-optimized source AMI, e.g. 1.29."
  default     = "1.29"
}

variable "windows_version" {
  type        = string
  description = "Windows Server version of the source AMI: 2019, 2022 or 2025 (EKS publishes 2025 AMIs from Kubernetes 1.35 on)."
  default     = "2022"

  validation {
    condition     = contains(["2019", "2022", "2025"], var.windows_version)
    error_message = "The windows_version must be one EKS publishes optimized AMIs for: \"2019\", \"2022\" or \"2025\"."
  }
}

variable "windows_edition" {
  type        = string
  description = "Windows Server edition of the source AMI: Core or Full."
  default     = "Core"

  validation {
    condition     = contains(["Core", "Full"], var.windows_edition)
    error_message = "The windows_edition must be \"Core\" or \"Full\" (the EKS-optimized AMI names' installation option)."
  }
}

variable "instance_type" {
  type        = string
  description = "Instance type of the build instance."
  default     = "m5.large"
}

variable "subnet_id" {
  type        = string
  description = "Subnet of the build instance (empty: the default VPC's). It must reach the instance's WinRM port 5986 from where Packer runs."
  default     = ""
}

variable "vpc_id" {
  type        = string
  description = "VPC of the build instance (with subnet_id; empty: the default VPC)."
  default     = ""
}

variable "associate_public_ip_address" {
  type        = bool
  description = "Give the build instance a public address (needed when Packer runs outside the VPC)."
  default     = true
}

variable "archive_path" {
  type        = string
  description = "The release archive from `make dist`: build/dist/csi-proxy-<version>-windows-amd64.zip. Its <archive>.sha256 (written by make dist) must be beside it: the instance checks the uploaded archive against it."
}

variable "config_path" {
  type        = string
  description = "Optional csi-proxy configuration file, installed as C:\\ProgramData\\csi-proxy\\config.yaml (the file the service reads by default). Empty: none; the service runs on its defaults."
  default     = ""
}

variable "local_groups" {
  type        = string
  description = "Local groups the node install script creates before csi-proxy starts (CSI_PROXY_GROUPS of scripts/node/install.cmd), space-separated, e.g. \"csi-proxy-smb csi-proxy-disk\": every group a config file's allowedCallers names must exist, or the service stops at start."
  default     = ""
}

variable "install_args" {
  type        = string
  description = "Extra arguments for the node install script (scripts/node/install.cmd), e.g. csi-proxy flags."
  default     = ""
}

variable "health_timeout_seconds" {
  type        = number
  description = "How long to wait for the csiproxy service to be running and healthy, after the install and after the restart."
  default     = 120
}

variable "ami_name_prefix" {
  type        = string
  description = "Prefix of the new AMI's name; the Windows version, edition, Kubernetes version and the build time follow."
  default     = "eks-windows-csi-proxy-c"
}

variable "root_volume_size" {
  type        = number
  description = "Root volume size in GiB."
  default     = 50
}

variable "winrm_allowed_cidrs" {
  type        = list(string)
  description = "Addresses the temporary security group admits to WinRM (5986); narrow it to where Packer runs, e.g. [\"203.0.113.7/32\"]."
  default     = ["0.0.0.0/0"]
}
