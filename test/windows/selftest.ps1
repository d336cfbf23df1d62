<#
.SYNOPSIS
  The node self-test: the installed csi-proxy service checked in place,
  changing nothing but a scratch directory it makes and removes under the
  kubelet directory. Shipped in the release archive (run it after install.cmd
  and after upgrade.cmd); the non-destructive part of run-all.ps1.

.DESCRIPTION
  Checks, each naming the README claim it proves:
    1. the service (default csiproxy) is running, automatic, and its
       executable and csi-proxy-cli.exe print the same version;
    2. csi-proxy-cli.exe health: every pipe the configuration serves answers;
    3. every csi-proxy pipe is csi-proxy-<group>-<version> of a known group
       and version, and its DACL is protected (D:P) and grants no broad group
       (Everyone, Anonymous, Authenticated Users, Users, Guests, Interactive,
       Network);
    4. the filesystem group in a scratch directory: Mkdir, PathExists,
       Rmdir; a path beside the kubelet directory (kubelet-evil) and the
       kubelet directory itself refused with INVALID_ARGUMENT, nothing done;
    5. the Event Log: the scratch Mkdir's audit record from source csi-proxy
       (skipped with -NoEventLog);
    6. with -MetricsUrl: /metrics counts the Mkdir calls and the health
       service's Checks of step 2.
  Prints "ok - ..." / "not ok - ..." / "skip - ..." and
  "N passed, N failed, N skipped"; exits 1 on any failure.
  Needs an elevated PowerShell when the pipes admit only SYSTEM and
  Administrators (the default). Windows PowerShell 5.1 or later.
.EXAMPLE
  & 'C:\Program Files\csi-proxy\releases\<version>\selftest.ps1'
.EXAMPLE
  .\selftest.ps1 -Dir C:\csi-test -MetricsUrl http://localhost:8888/metrics
#>
param(
    # Where csi-proxy-cli.exe is: beside this script in the release archive,
    # else the service executable's directory.
    [string] $Dir = '',
    [string] $Service = 'csiproxy',
    [string] $Kubelet = 'C:\var\lib\kubelet',
    [string] $MetricsUrl = '',
    [switch] $NoEventLog
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

function Run([string] $file, [string[]] $argv) {
    $r = Invoke-Native $file $argv
    [pscustomobject]@{ Code = $r.Code; Out = ($r.Out -join ' | ') }
}
# The request goes through a file: PowerShell 5.1 mangles quotes in native arguments.
$reqFile = Join-Path $env:TEMP "csi-proxy-selftest-$PID.json"
function Fs([string] $Method, $Body) {
    [IO.File]::WriteAllText($reqFile, ($Body | ConvertTo-Json -Compress))
    Run $Cli @('filesystem', 'v1', $Method, "@$reqFile")
}

Add-Type -TypeDefinition @'
using System;
using System.Runtime.InteropServices;
public static class PipeSddl {
    [DllImport("advapi32.dll", CharSet = CharSet.Unicode)]
    static extern uint GetNamedSecurityInfoW(string name, int type, int info, IntPtr owner, IntPtr group,
        IntPtr dacl, IntPtr sacl, out IntPtr sd);
    [DllImport("advapi32.dll", CharSet = CharSet.Unicode, SetLastError = true)]
    static extern bool ConvertSecurityDescriptorToStringSecurityDescriptorW(IntPtr sd, uint rev, int info,
        out IntPtr str, IntPtr len);
    [DllImport("kernel32.dll")]
    static extern IntPtr LocalFree(IntPtr p);
    // The DACL of \\.\pipe\<name> as SDDL (SE_FILE_OBJECT, DACL_SECURITY_INFORMATION).
    public static string Get(string name) {
        IntPtr sd;
        uint rc = GetNamedSecurityInfoW(@"\\.\pipe\" + name, 1, 4, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, IntPtr.Zero, out sd);
        if (rc != 0) return "error " + rc;
        try {
            IntPtr s;
            if (!ConvertSecurityDescriptorToStringSecurityDescriptorW(sd, 1, 4, out s, IntPtr.Zero))
                return "error " + Marshal.GetLastWin32Error();
            try { return Marshal.PtrToStringUni(s); } finally { LocalFree(s); }
        } finally { LocalFree(sd); }
    }
}
'@

# --- 1. the service -------------------------------------------------------------
Claim 'README "Installing on a node": the csiproxy service runs, starts automatically, and the exe and the CLI are one release'
$svc = Get-CimInstance -ClassName Win32_Service -Filter "Name='$Service'"
if (-not $svc) {
    Bad "service $Service is installed" 'Get-CimInstance Win32_Service found none'
    Complete-Tests
}
Check ("$($svc.State)" -eq 'Running') "service $Service is running" "$($svc.State)"
Check ("$($svc.StartMode)" -eq 'Auto') "service $Service starts automatically" "$($svc.StartMode)"
if ($svc.PathName -match '^"([^"]+)"') { $exe = $Matches[1] }
elseif ($svc.PathName -match '^(.+?\.exe)') { $exe = $Matches[1] }
else { $exe = '' }
Check ($exe -and (Test-Path -LiteralPath $exe)) 'the service executable exists' $svc.PathName
if (-not $Dir) {
    if (Test-Path (Join-Path $PSScriptRoot 'csi-proxy-cli.exe')) { $Dir = $PSScriptRoot }
    elseif ($exe) { $Dir = Split-Path -Parent $exe }
}
$Cli = Join-Path $Dir 'csi-proxy-cli.exe'
if (-not (Test-Path -LiteralPath $Cli)) {
    Bad 'csi-proxy-cli.exe is found' "not in $Dir (give -Dir)"
    Complete-Tests
}
if ($exe -and (Test-Path -LiteralPath $exe)) {
    $v1 = (Run $exe @('-version')).Out -replace '^csi-proxy version ', ''
    $v2 = (Run $Cli @('--version')).Out -replace '^csi-proxy-cli ', ''
    Write-TestLine "# $exe -version: $v1; csi-proxy-cli --version: $v2"
    Check ($v1 -and $v1 -eq $v2) 'csi-proxy.exe -version and csi-proxy-cli.exe --version agree' "$v1 / $v2"
}

# --- 2. health ------------------------------------------------------------------
Claim 'README "Health": every pipe the configuration serves answers a real, harmless call'
$r = Run $Cli @('health')
Write-TestLine "# health: $($r.Out)"
Check ($r.Code -eq 0) 'csi-proxy-cli.exe health exits 0' "exit $($r.Code): $($r.Out)"

# --- 3. the pipes and their DACLs ----------------------------------------------------
Claim 'README "Security model" 1: every pipe is created with a protected DACL (D:P) that admits no broad group'
$known = @{
    disk = 'v1alpha1 v1beta1 v1beta2 v1beta3 v1'; filesystem = 'v1alpha1 v1beta1 v1beta2 v1 v2alpha1'
    iscsi = 'v1alpha1 v1alpha2'; smb = 'v1alpha1 v1beta1 v1beta2 v1'; system = 'v1alpha1'
    volume = 'v1alpha1 v1beta1 v1beta2 v1beta3 v1 v2alpha1'
}
$pipes = @([IO.Directory]::GetFiles('\\.\pipe\') | ForEach-Object { Split-Path -Leaf $_ } | Where-Object { $_ -like 'csi-proxy-*' } | Sort-Object -Unique)
Check ($pipes.Count -gt 0) "csi-proxy pipes exist ($($pipes.Count))"
$broad = @('WD', 'AN', 'AU', 'BU', 'BG', 'IU', 'NU', 'S-1-1-0', 'S-1-5-7', 'S-1-5-11', 'S-1-5-32-545', 'S-1-5-32-546', 'S-1-5-4', 'S-1-5-2')
foreach ($p in $pipes) {
    $parts = $p.Substring('csi-proxy-'.Length).Split('-')
    $ok = $parts.Count -eq 2 -and $known.ContainsKey($parts[0]) -and (" $($known[$parts[0]]) " -like "* $($parts[1]) *")
    Check $ok "pipe $p is a known group and version"
    $sddl = [PipeSddl]::Get($p)
    if ($sddl -eq 'error 5') { # the DACL grants this caller no READ_CONTROL (a least-privilege configuration)
        Skip "pipe ${p}: DACL protected, no broad group" 'the DACL does not let this caller read it'
        continue
    }
    $allow = @([regex]::Matches($sddl, '\(A;[^;]*;[^;]*;[^;]*;[^;]*;([^)]+)\)') | ForEach-Object { $_.Groups[1].Value })
    $wide = @($allow | Where-Object { $broad -contains $_ })
    Check ($sddl.StartsWith('D:P') -and $allow.Count -gt 0 -and $wide.Count -eq 0) "pipe ${p}: DACL protected, no broad group" $sddl
}

# --- 4. the filesystem group in a scratch directory ---------------------------------
Claim 'README "Behaviour compared with upstream", path rules, and "Security model" 6 (the roots are kept)'
$scratch = Join-Path $Kubelet ('csi-proxy-selftest-' + [guid]::NewGuid().ToString('N'))
$started = Get-Date
$fsNote = ''
if (-not ($pipes -contains 'csi-proxy-filesystem-v1')) {
    $fsNote = 'the configuration serves no filesystem v1'
} else {
    $r = Fs 'PathExists' @{ path = $Kubelet }
    if ($r.Code -eq 7 -or ($r.Code -eq 14 -and $r.Out -like '*denied*')) {
        $fsNote = "the configuration does not allow this caller ($($r.Out)): run as an allowed account"
    }
}
if ($fsNote) {
    Skip 'the filesystem group in a scratch directory' $fsNote
} else {
    $r = Fs 'Mkdir' @{ path = "$scratch\a\b" }
    Check ($r.Code -eq 0 -and (Test-Path -LiteralPath "$scratch\a\b")) "Mkdir $scratch\a\b" $r.Out
    $r = Fs 'PathExists' @{ path = "$scratch\a\b" }
    Check ($r.Code -eq 0 -and $r.Out -like '*"exists":true*') 'PathExists of it is true' $r.Out
    $evil = "$Kubelet-evil\csi-proxy-selftest"
    $r = Fs 'Mkdir' @{ path = $evil }
    Check ($r.Code -eq 3 -and $r.Out -like '*is not within the working directories*' -and -not (Test-Path -LiteralPath $evil)) `
        'a path beside the kubelet directory (kubelet-evil) is INVALID_ARGUMENT, nothing made' $r.Out
    $r = Fs 'Rmdir' @{ path = $Kubelet; force = $true }
    Check ($r.Code -eq 3 -and (Test-Path -LiteralPath $Kubelet)) 'Rmdir of the kubelet directory itself is INVALID_ARGUMENT, it stays' $r.Out
    $r = Fs 'Rmdir' @{ path = $scratch; force = $true }
    Check ($r.Code -eq 0 -and -not (Test-Path -LiteralPath $scratch)) 'Rmdir (force) of the scratch directory' $r.Out
    $r = Fs 'PathExists' @{ path = $scratch }
    Check ($r.Code -eq 0 -and $r.Out -notlike '*"exists":true*') 'PathExists of it is false afterwards' $r.Out
}
Remove-Item -Force $reqFile -ErrorAction SilentlyContinue

# --- 5. the Event Log -------------------------------------------------------------
Claim 'README "Security model" 3: every state-changing call is audited, in the Application log (source csi-proxy)'
if ($NoEventLog -or $fsNote) {
    Skip 'the Mkdir audit record in the Application log' $(if ($fsNote) { "no Mkdir made: $fsNote" } else { '-NoEventLog' })
} else {
    $found = $null
    $until = (Get-Date).AddSeconds(10)
    while (-not $found -and (Get-Date) -lt $until) {
        Start-Sleep -Milliseconds 500
        $found = Get-WinEvent -FilterHashtable @{ LogName = 'Application'; ProviderName = 'csi-proxy'; StartTime = $started.AddSeconds(-2) } -ErrorAction SilentlyContinue |
            Where-Object { $_.Message -like '*/v1.Filesystem/Mkdir*' } | Select-Object -First 1
    }
    Check ($null -ne $found) 'the Mkdir is audited in the Application log (source csi-proxy)'
}

# --- 6. metrics --------------------------------------------------------------------
Claim 'README "Installing on a node", metrics: -metrics-bind-address serves Prometheus text with per-method counts'
if ($fsNote) {
    Skip 'the /metrics counts' "no Mkdir made: $fsNote"
} elseif (-not $MetricsUrl) {
    Skip 'the /metrics counts' 'no -MetricsUrl (the service runs without -metrics-bind-address, or it is not known here)'
} else {
    try {
        $text = (Invoke-WebRequest -UseBasicParsing -Uri $MetricsUrl -TimeoutSec 10).Content
        $line = @($text -split "`n" | Where-Object { $_ -like 'grpc_server_handled_total{*grpc_method="Mkdir"*grpc_service="v1.Filesystem"*' -and $_ -like '*grpc_code="OK"*' })
        Check ($line.Count -eq 1 -and [double]($line[0] -split ' ')[-1] -ge 1) 'grpc_server_handled_total counts the Mkdir (code OK)' ($line -join ' ')
        $bad = @($text -split "`n" | Where-Object { $_ -like 'grpc_server_handled_total{*grpc_code="InvalidArgument"*grpc_method="Mkdir"*' })
        Check ($bad.Count -eq 1) '... and the refused one (code InvalidArgument)' ($bad -join ' ')
        # step 2's csi-proxy-cli health called the health service's Check on every pipe
        $hc = @($text -split "`n" | Where-Object { $_ -like 'grpc_server_handled_total{*grpc_method="Check"*grpc_service="grpc.health.v1.Health"*grpc_type="unary"*' -and $_ -like '*grpc_code="OK"*' })
        Check ($hc.Count -eq 1 -and [double]($hc[0] -split ' ')[-1] -ge 1) '... and the health Checks of step 2 (grpc.health.v1.Health, unary, code OK)' ($hc -join ' ')
    } catch {
        Bad "GET $MetricsUrl" "$_"
    }
}

Complete-Tests
