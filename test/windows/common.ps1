<#
.SYNOPSIS
  The one way every script in test/windows/ reports a check: dot-sourced
  (`. (Join-Path $PSScriptRoot 'common.ps1')`), it gives

    Claim 'README: ...'         what the checks that follow prove: a README
                                claim or a DRIVER-CONTRACTS fact, named
    Ok / Bad / Check / Skip     one check each, printed as "ok - name",
                                "not ok - name" (+ an indented why) or
                                "skip - name (why)"
    Complete-Tests              "N passed, N failed, N skipped"; exit 1 on
                                any failure, 0 otherwise
    Invoke-Native FILE ARGS     runs a program: its exit code and its stdout
                                and stderr lines, whatever
                                $ErrorActionPreference the script has (the
                                only place a program's 2>&1 is allowed)

  The lines go to the console ([Console]::Out), not into the pipeline, so a
  function that checks and then returns a value returns only that value.
  When $env:CSI_PROXY_TEST_RESULTS names a file, every check is also
  appended to it as one JSON line {status, script, name, claim, detail}:
  run-all.ps1 counts those and writes the JUnit file from them.

  Also here: the throw-away VHDX helpers (diskpart only: no Hyper-V
  PowerShell needed) shared by staging.ps1, drivers.ps1 and iscsi.ps1's
  callers.
#>
$script:TestsPassed = 0
$script:TestsFailed = 0
$script:TestsSkipped = 0
$script:TestClaim = ''
$script:TestScriptName = 'script'
if ($MyInvocation.PSCommandPath) {
    $script:TestScriptName = [IO.Path]::GetFileNameWithoutExtension($MyInvocation.PSCommandPath)
}

function Write-TestLine([string] $text) { [Console]::Out.WriteLine($text) }

function Add-TestRecord([string] $status, [string] $name, [string] $why) {
    $file = $env:CSI_PROXY_TEST_RESULTS
    if (-not $file) { return }
    $rec = [ordered]@{ status = $status; script = $script:TestScriptName; name = $name; claim = $script:TestClaim; detail = $why }
    $line = ConvertTo-Json -InputObject $rec -Compress
    [IO.File]::AppendAllText($file, $line + "`n", (New-Object Text.UTF8Encoding $false))
}

# What the checks that follow prove, until the next Claim.
function Claim([string] $text) {
    $script:TestClaim = $text
    Write-TestLine "# proves: $text"
}

function Ok([string] $name) {
    $script:TestsPassed++
    Write-TestLine "ok - $name"
    Add-TestRecord 'pass' $name ''
}

function Bad([string] $name, [string] $why = '') {
    $script:TestsFailed++
    Write-TestLine "not ok - $name"
    if ($why) { Write-TestLine "    $why" }
    Add-TestRecord 'fail' $name $why
}

function Check([bool] $cond, [string] $name, [string] $why = '') {
    if ($cond) { Ok $name } else { Bad $name $why }
}

# A check that could not be made here, with the reason (never counted as passed).
function Skip([string] $name, [string] $why) {
    $script:TestsSkipped++
    Write-TestLine "skip - $name ($why)"
    Add-TestRecord 'skip' $name $why
}

# Runs a program (a native command) and returns [pscustomobject]@{ Code;
# Out (its stdout and stderr lines, as strings); Text (those lines joined
# with newlines) }. The one place a script merges a program's stderr (2>&1):
# Windows PowerShell 5.1 turns each stderr line of a native command into an
# ErrorRecord on the Error stream and applies $ErrorActionPreference to it,
# so under the scripts' 'Stop' one stderr line (the CLI's "cannot connect",
# exit 14) would end the script (about_Preference_Variables: only from
# PowerShell 7.2 on does the preference not affect redirected native
# records; "Differences between Windows PowerShell 5.1 and PowerShell 7.x").
# Here the preference is 'Continue' in this function's scope only: the
# records become lines of Out, and the exit code decides. A program that
# cannot be started gives Code -1 and the reason as its one line (never a
# stale $LASTEXITCODE). $onLine, when given, is called with each line as it
# comes (run-all shows a child's output live); it runs in this function's
# scope chain, so it names the caller's variables as $script:NAME.
function Invoke-Native([string] $file, [string[]] $argv = @(), [scriptblock] $onLine = $null) {
    $ErrorActionPreference = 'Continue'
    try {
        $out = @(& $file @argv 2>&1 | ForEach-Object {
                $line = "$_"
                if ($onLine) { & $onLine $line }
                $line
            })
        $code = $LASTEXITCODE
    } catch {
        $out = @("cannot run ${file}: $($_.Exception.Message)")
        $code = -1
    }
    [pscustomobject]@{ Code = $code; Out = $out; Text = ($out -join "`n") }
}

function Complete-Tests {
    Write-TestLine "$($script:TestsPassed) passed, $($script:TestsFailed) failed, $($script:TestsSkipped) skipped"
    if ($script:TestsFailed -gt 0) { exit 1 }
    exit 0
}

# The JSON-lines file of Add-TestRecord as JUnit XML (one testsuite per
# script, the claim as each testcase's system-out); per-script totals printed;
# the totals returned.
function Write-JUnit([string] $resultsFile, [string] $junitFile) {
    $recs = @([IO.File]::ReadAllLines($resultsFile) | Where-Object { $_ } | ForEach-Object { $_ | ConvertFrom-Json })
    $nf = @($recs | Where-Object { $_.status -eq 'fail' }).Count
    $ns = @($recs | Where-Object { $_.status -eq 'skip' }).Count
    $x = New-Object Text.StringBuilder
    [void]$x.AppendLine('<?xml version="1.0" encoding="UTF-8"?>')
    [void]$x.AppendLine("<testsuites name=`"csi-proxy windows`" tests=`"$($recs.Count)`" failures=`"$nf`" skipped=`"$ns`">")
    foreach ($g in @($recs | Group-Object script)) {
        $gf = @($g.Group | Where-Object { $_.status -eq 'fail' }).Count
        $gs = @($g.Group | Where-Object { $_.status -eq 'skip' }).Count
        Write-TestLine ('# {0,-12} {1} passed, {2} failed, {3} skipped' -f $g.Name, ($g.Count - $gf - $gs), $gf, $gs)
        [void]$x.AppendLine("  <testsuite name=`"$(Format-Xml $g.Name)`" tests=`"$($g.Count)`" failures=`"$gf`" skipped=`"$gs`">")
        foreach ($r in $g.Group) {
            [void]$x.Append("    <testcase classname=`"windows.$(Format-Xml $r.script)`" name=`"$(Format-Xml $r.name)`">")
            if ($r.status -eq 'fail') { [void]$x.Append("<failure message=`"$(Format-Xml $r.detail)`"/>") }
            if ($r.status -eq 'skip') { [void]$x.Append("<skipped message=`"$(Format-Xml $r.detail)`"/>") }
            if ($r.claim) { [void]$x.Append("<system-out>proves: $(Format-Xml $r.claim)</system-out>") }
            [void]$x.AppendLine('</testcase>')
        }
        [void]$x.AppendLine('  </testsuite>')
    }
    [void]$x.AppendLine('</testsuites>')
    [IO.File]::WriteAllText($junitFile, $x.ToString(), (New-Object Text.UTF8Encoding $false))
    [pscustomobject]@{ Passed = $recs.Count - $nf - $ns; Failed = $nf; Skipped = $ns }
}
function Format-Xml([string] $s) { [Security.SecurityElement]::Escape($s) }

# --- throw-away VHDX disks, with diskpart -------------------------------------
function Invoke-Diskpart([string[]] $lines) {
    $f = Join-Path $env:TEMP "csi-proxy-diskpart-$PID.txt"
    [IO.File]::WriteAllLines($f, $lines)
    $r = Invoke-Native 'diskpart.exe' @('/s', $f)
    Remove-Item -Force $f -ErrorAction SilentlyContinue
    if ($r.Code -ne 0) { throw "diskpart: $($r.Out -join ' ')" }
}

# A new dynamic VHDX of $sizeMB, attached; its file and disk number.
function New-TestVhd([string] $path, [int] $sizeMB) {
    if (Test-Path $path) { Remove-TestVhd $path }
    Invoke-Diskpart @("create vdisk file=`"$path`" maximum=$sizeMB type=expandable", "select vdisk file=`"$path`"", 'attach vdisk')
    $leaf = Split-Path -Leaf $path
    $until = (Get-Date).AddSeconds(20)
    $disk = $null
    while (-not $disk -and (Get-Date) -lt $until) {
        Start-Sleep -Milliseconds 500
        $disk = Get-Disk | Where-Object { $_.Location -eq $path -or $_.Location -like "*\$leaf" } | Select-Object -First 1
    }
    if (-not $disk) { throw "the attached VHDX $path does not show in Get-Disk" }
    [pscustomobject]@{ File = $path; Number = [int] $disk.Number }
}

# Detach, expand to $sizeMB, attach again (the disk keeps its number or gets
# a new one: the new number is returned).
function Resize-TestVhd([string] $path, [int] $sizeMB) {
    Invoke-Diskpart @("select vdisk file=`"$path`"", 'detach vdisk')
    Invoke-Diskpart @("select vdisk file=`"$path`"", "expand vdisk maximum=$sizeMB")
    Invoke-Diskpart @("select vdisk file=`"$path`"", 'attach vdisk')
    Start-Sleep -Seconds 2
    $leaf = Split-Path -Leaf $path
    $disk = Get-Disk | Where-Object { $_.Location -eq $path -or $_.Location -like "*\$leaf" } | Select-Object -First 1
    if (-not $disk) { throw "the re-attached VHDX $path does not show in Get-Disk" }
    [int] $disk.Number
}

function Remove-TestVhd([string] $path) {
    try { Invoke-Diskpart @("select vdisk file=`"$path`"", 'detach vdisk') } catch { Write-TestLine "# detach ${path}: $_" }
    Remove-Item -Force $path -ErrorAction SilentlyContinue
}
