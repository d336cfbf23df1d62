#!/usr/bin/env bash
# The Packer template (scripts/packer) with Debian's packer
# (1.6.6), offline, no AWS credentials:
#   * packer fmt -check: the files are in canonical format;
#   * packer validate (full, not -syntax-only: the amazon-ebs builder's own
#     configuration checks run) with a stand-in archive and its .sha256, with
#     the defaults and with example.pkrvars.hcl, for 2019 Core, 2022 Full and
#     the EKS-optimized Windows Server 2025 Core and Full AMIs (published
#     from Kubernetes 1.35 on); a Windows version or edition EKS publishes no
#     AMI for (2016, "Datacenter") is refused by validate, naming the variable;
#   * on 2022 and 2025 (EC2Launch v2 only) prepare-image.ps1 is told the
#     version and refuses to fall back to EC2Launch v1;
#   * the source AMI filter is the EKS-optimized Windows AMI name, owner amazon;
#   * test/packer/crosscheck.py: the Packer scripts and the node scripts
#     agree (script and exe names, environment variables, service name,
#     where the config goes, health's options);
#   * self-tests: an unformatted copy fails fmt -check; a copy with a `data`
#     block (Packer 1.7+) fails validate; an archive without its .sha256 fails
#     validate; copies with one mismatch each fail crosscheck.py; so the
#     checks above can fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/wine/lib.sh
pass=0
fail=0
P=scripts/packer
PY=/usr/bin/python3
T=$(mktemp -d /tmp/csi-proxy-packer.XXXXXX)
trap 'rm -rf "$T"' EXIT
# No credentials, no instance metadata lookups, no checkpoint call home.
export HOME=$T AWS_EC2_METADATA_DISABLED=true CHECKPOINT_DISABLE=1 PACKER_CACHE_DIR=$T/cache
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE

command -v packer >/dev/null || { bad "packer is installed (scripts/apt-packages.txt)"; finish; exit 1; }
echo "# $(packer version | head -1)"

A=$T/csi-proxy-v9.9.9-test-windows-amd64.zip
echo "stand-in" >"$A"
(cd "$T" && sha256sum "$(basename "$A")" >"$(basename "$A").sha256")

out=$(packer fmt -check "$P" 2>&1)
check "packer fmt -check $P" $? "$out"

validate() { # validate NAME DIR ARGS...
    local name=$1 dir=$2
    shift 2
    out=$(timeout 300 packer validate "$@" "$dir" 2>&1)
    check "$name" $? "$out"
}
validate "packer validate $P (defaults)" "$P" -var "archive_path=$A"
validate "packer validate $P -var-file example.pkrvars.hcl" "$P" -var-file "$P/example.pkrvars.hcl" -var "archive_path=$A"
for wv_ed in "2019 Core 1.28" "2022 Full 1.28" "2025 Core 1.35" "2025 Full 1.35"; do
    set -- $wv_ed
    validate "packer validate $P: Windows Server $1 $2, Kubernetes $3, a config file and its local groups" "$P" \
        -var "archive_path=$A" -var "windows_version=$1" -var "windows_edition=$2" \
        -var kubernetes_version=$3 -var "config_path=$PWD/config/csi-proxy.least-privilege.example.yaml" \
        -var "local_groups=csi-proxy-smb csi-proxy-disk"
done
refused() { # NAME WANT-TEXT ARGS...: packer validate must fail, its message holding WANT-TEXT
    local name=$1 want=$2
    shift 2
    out=$(timeout 300 packer validate -var "archive_path=$A" "$@" "$P" 2>&1)
    check "$name" "$([ $? != 0 ] && [[ "$out" == *"$want"* ]]; echo $?)" "$out"
}
refused "packer validate refuses windows_version=2016 (no EKS-optimized AMI), naming the variable" \
    "windows_version must be" -var windows_version=2016
refused "packer validate refuses windows_edition=Datacenter, naming the variable" "windows_edition must be" -var windows_edition=Datacenter

f=$P/csi-proxy-eks-windows.pkr.hcl
grep -qF 'name                = "Windows_Server-${var.windows_version}-English-${var.windows_edition}-EKS_Optimized-${var.kubernetes_version}-*"' "$f" &&
    grep -qF 'owners      = ["amazon"]' "$f" && grep -qF 'most_recent = true' "$f"
check "source_ami_filter: the latest Windows_Server-<v>-English-<edition>-EKS_Optimized-<k8s>-* owned by amazon" $?
# EC2Launch v2 is the only launch agent of the 2022 and 2025 AMIs ("EC2Launch
# v2 comes pre-installed on Amazon Windows Server 2022 and 2025 AMIs",
# Amazon EC2 User Guide, "Install the latest version of EC2Config"):
# prepare-image.ps1 gets the version and does not fall back to v1 there.
grep -qF '"CSI_PROXY_WINDOWS_VERSION=${var.windows_version}"' "$f" &&
    grep -qE '\$env:CSI_PROXY_WINDOWS_VERSION -(in|eq)' $P/prepare-image.ps1 &&
    grep -qF "'2025'" $P/prepare-image.ps1
check "prepare-image.ps1 is given windows_version and requires EC2Launch v2 on 2022 and 2025" $?
for s in winrm-userdata.ps1 install.ps1 selftest-node.ps1 verify.ps1 prepare-image.ps1 no-config.yaml; do
    [ -f "$P/$s" ] && grep -qF "$s" "$f"
    check "the template uses $P/$s, which exists" $?
done

# The Packer scripts against the node scripts and the programs (names,
# environment variables, the service name, the config's place, health's
# options): test/packer/crosscheck.py.
out=$($PY test/packer/crosscheck.py 2>&1)
check "the Packer scripts and the node scripts agree (test/packer/crosscheck.py)" $? "$(grep -A3 '^not ok' <<<"$out")"
grep '^ok' <<<"$out" | sed 's/^/#   /'

# --- self-tests ----------------------------------------------------------------
cp -r "$P" "$T/bad-fmt"
sed -i 's/^  region        = var.region/  region = var.region/' "$T/bad-fmt/csi-proxy-eks-windows.pkr.hcl"
out=$(packer fmt -check "$T/bad-fmt" 2>&1)
check "self-test: a misaligned attribute fails fmt -check" "$([ $? != 0 ]; echo $?)" "$out"
cp -r "$P" "$T/bad-data"
printf 'data "amazon-ami" "eks" {\n  region = "us-east-1"\n}\n' >>"$T/bad-data/csi-proxy-eks-windows.pkr.hcl"
out=$(timeout 300 packer validate -var "archive_path=$A" "$T/bad-data" 2>&1)
check "self-test: a data block fails validate (Packer 1.6.6 has none)" "$([ $? != 0 ]; echo $?)" "$out"
echo "stand-in" >"$T/csi-proxy-v0-nosum-windows-amd64.zip"
out=$(timeout 300 packer validate -var "archive_path=$T/csi-proxy-v0-nosum-windows-amd64.zip" "$P" 2>&1)
check "self-test: an archive without its .sha256 fails validate" "$([ $? != 0 ]; echo $?)" "$out"
# crosscheck.py on copies with one mismatch each.
xc() { # NAME FILE SED-EXPR: the copy's FILE edited must fail crosscheck.py
    rm -rf "$T/xc"
    mkdir -p "$T/xc"
    cp -r scripts service cli mk "$T/xc/"
    sed -i "$3" "$T/xc/$2"
    cmp -s "$2" "$T/xc/$2" && { bad "self-test: $1 (the edit changed nothing)"; return; }
    out=$($PY test/packer/crosscheck.py "$T/xc" 2>&1)
    check "self-test: $1 fails crosscheck.py" "$([ $? != 0 ]; echo $?)" "$out"
}
xc "the template passing CSI_PROXY_CONFIG to install.ps1" $P/csi-proxy-eks-windows.pkr.hcl \
    's/"CSI_PROXY_CONFIG_UPLOAD=/"CSI_PROXY_CONFIG=/'
xc "install.ps1 running a .cmd the archive lacks" $P/install.ps1 's/"install.cmd"/"setup.cmd"/'
xc "verify.ps1 giving health an option it does not take" $P/verify.ps1 's/& $cli health/& $cli health -timeout 5/'
xc "a service name other than the exe's" $P/verify.ps1 "s/Name='csiproxy'/Name='csi-proxy'/"
xc "the config installed elsewhere than the default path" $P/install.ps1 's/Join-Path $dir "config.yaml"/Join-Path $dir "csi-proxy.yaml"/'
xc "the config folder left with ProgramData's inherited DACL" $P/install.ps1 's/(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)/(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1301bf;;;BU)/'
xc "a variable passed that the script never reads" $P/csi-proxy-eks-windows.pkr.hcl \
    's/"CSI_PROXY_GROUPS=${var.local_groups}",/&\n      "CSI_PROXY_EXTRA=1",/'
xc "the node self-test run before install.cmd" $P/csi-proxy-eks-windows.pkr.hcl \
    's|"${path.root}/install.ps1"|"${path.root}/SWAP.ps1"|; s|"${path.root}/selftest-node.ps1"|"${path.root}/install.ps1"|; s|"${path.root}/SWAP.ps1"|"${path.root}/selftest-node.ps1"|'
xc "the node self-test's failure not failing the build" $P/selftest-node.ps1 's/exit 1 }/exit 0 }/'
xc "the archive without the node self-test" mk/dist.mk 's|test/windows/selftest.ps1 ||'
finish
