<#
.SYNOPSIS
  Judges the output of upstream csi-proxy's integrationtests (`go test -json`),
  run against this project's service, against the named expectations in
  expected.txt: every deliberate difference must show as written there, and
  nothing else may fail. Prints one line per test and
  "N passed, N failed, N skipped"; writes JUnit XML. NOT RUN by the team yet.
.EXAMPLE
  .\compare.ps1 -GoTestJson go-test.json -Expected .\expected.txt -JUnit junit.xml
#>
param(
    [Parameter(Mandatory = $true)] [string] $GoTestJson,
    [Parameter(Mandatory = $true)] [string] $Expected,
    [string] $JUnit = ''
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3
if (-not $env:CSI_PROXY_TEST_RESULTS) {
    $env:CSI_PROXY_TEST_RESULTS = Join-Path $env:TEMP "csi-proxy-upstream-$PID.jsonl"
    [IO.File]::WriteAllText($env:CSI_PROXY_TEST_RESULTS, '')
}
. (Join-Path $PSScriptRoot '..\common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests, Write-JUnit
$script:TestScriptName = 'upstream'

# expected.txt: name<TAB>text<TAB>why
$expect = @{}
foreach ($l in Get-Content -LiteralPath $Expected) {
    if (-not $l -or $l.StartsWith('#')) { continue }
    $f = $l.Split("`t")
    if ($f.Count -ne 3) { throw "${Expected}: not three tab-separated fields: $l" }
    $expect[$f[0]] = [pscustomobject]@{ Text = $f[1]; Why = $f[2] }
}

# go test -json: the last pass/fail/skip of each test, and its output.
$result = @{}
$output = @{}
$pkgFail = @()
foreach ($l in Get-Content -LiteralPath $GoTestJson) {
    if (-not $l.StartsWith('{')) { continue }
    $e = $l | ConvertFrom-Json
    $test = if ($e.PSObject.Properties['Test']) { $e.Test } else { '' }
    if ($e.Action -eq 'output' -and $test) {
        if (-not $output.ContainsKey($test)) { $output[$test] = New-Object Text.StringBuilder }
        [void]$output[$test].Append($e.Output)
    } elseif ($e.Action -in @('pass', 'fail', 'skip')) {
        if ($test) { $result[$test] = $e.Action } elseif ($e.Action -eq 'fail') { $pkgFail += $e.Package }
    }
}
function Out-Of([string] $t) { if ($output.ContainsKey($t)) { $output[$t].ToString() } else { '' } }

# A test is judged by itself when it has no subtests; a parent only through them.
$names = @($result.Keys | Sort-Object)
$leaves = @($names | Where-Object { $n = $_; -not ($names | Where-Object { $_.StartsWith("$n/") }) })

Claim 'README "Behaviour compared with upstream": same results for valid input; each deliberate difference named in expected.txt'
foreach ($t in $leaves) {
    $r = $result[$t]
    if ($expect.ContainsKey($t)) {
        $x = $expect[$t]
        if ($r -eq 'fail' -and (Out-Of $t).Contains($x.Text)) { Ok "$t fails as expected: $($x.Why)" }
        elseif ($r -eq 'fail') { Bad "$t fails as expected: $($x.Why)" "it fails, but its output lacks '$($x.Text)': $(Out-Of $t)" }
        else { Bad "$t fails as expected: $($x.Why)" "it did ${r}: the expectation is stale or the behaviour changed" }
    } elseif ($r -eq 'pass') {
        Ok $t
    } elseif ($r -eq 'skip') {
        Skip $t ((Out-Of $t).Trim() -replace '\s+', ' ')
    } else {
        Bad $t (Out-Of $t)
    }
}
foreach ($t in @($expect.Keys | Sort-Object)) {
    if (-not $result.ContainsKey($t)) { Bad "$t fails as expected: $($expect[$t].Why)" 'the test did not run' }
}
# A package that failed with no test failing on its own (a build error, a
# panic, the time limit) is a failure of its own.
$unexplained = @($leaves | Where-Object { $result[$_] -eq 'fail' -and -not $expect.ContainsKey($_) })
foreach ($p in $pkgFail) {
    $leafFails = @($leaves | Where-Object { $result[$_] -eq 'fail' })
    if ($leafFails.Count -eq 0 -and $unexplained.Count -eq 0) { Bad "package $p" 'failed with no failing test: a build error, a panic or the time limit' }
}
if ($names.Count -eq 0) { Bad 'go test ran tests' "no test result in $GoTestJson" }

if ($JUnit) { Write-JUnit $env:CSI_PROXY_TEST_RESULTS $JUnit | Out-Null }
Complete-Tests
