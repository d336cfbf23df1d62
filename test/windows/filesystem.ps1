<#
.SYNOPSIS
  The filesystem group's writes on a real Windows node: links as Windows
  makes them, and confinement that holds while a parent directory is swapped
  for a junction. What Wine cannot show (its CreateSymbolicLinkW and
  FSCTL_SET_REPARSE_POINT make no links, and its opens follow a link even
  with FILE_OPEN_REPARSE_POINT). Status: written, reviewed, NOT RUN by the
  team (CI is Linux + Wine).

.DESCRIPTION
  Run from an elevated PowerShell on a throw-away node, with csi-proxy.exe
  serving (as the service, LocalSystem, or in a console) and
  csi-proxy-cli.exe at -Cli. It checks:
    1. CreateSymlink makes a directory symbolic link for a directory source
       and a file symbolic link for a file source (LinkType, the Directory
       attribute, Target as given), made relative to the judged parent
       handle (NtCreateFile + FSCTL_SET_REPARSE_POINT, host/fs_write_win.c);
       ALREADY_EXISTS onto an existing path; Rmdir of the link keeps its target;
    2. the race: a background job owns <kubelet>\plugins\csi-proxy-race and
       keeps swapping its directory d for a junction to a directory outside
       the roots (a junction needs no privilege) while Rmdir (force), Rmdir
       of a file, RmdirContents, Mkdir (one and two levels) and
       CreateSymlink run below d, -Tries times each: nothing outside may be
       created, emptied or removed (host/fs.h, cp_fs_guard). Before each
       try the job is paused with d real, the last try's leftovers are
       removed and the try's input is made; the call then runs against the
       swapping;
    3. RmdirContents of a name swapped for a junction to the kubelet
       directory never empties the kubelet directory.
  It changes the machine when the service is wrong: step 3 points a
  junction at the kubelet directory, so a confinement defect empties it
  (run-all.ps1 runs this script with -Destructive only), and -Outside is
  removed before and after the run. Everything it makes is removed at the
  end; links are removed as links, never entered.
  Reports through common.ps1 ("ok - ..." / "not ok - ...", each under the
  claim it proves); exits 1 on any failure. Record the result (date,
  Windows build, output) in README.md.
.EXAMPLE
  .\filesystem.ps1 -Cli C:\csi-test\csi-proxy-cli.exe
#>
param(
    [Parameter(Mandatory = $true)] [string] $Cli,
    [string] $Kubelet = 'C:\var\lib\kubelet',
    [string] $Outside = 'C:\csi-proxy-race-outside',
    [int] $Tries = 300
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3
. (Join-Path $PSScriptRoot 'common.ps1')   # Claim, Ok, Bad, Check, Skip, Complete-Tests

# The request goes through a file: PowerShell 5.1 mangles quotes in native arguments.
$reqFile = Join-Path $env:TEMP "csi-proxy-fs-$PID.json"
function Rpc([string] $Method, $Body) {
    [IO.File]::WriteAllText($reqFile, ($Body | ConvertTo-Json -Compress -Depth 4))
    $r = Invoke-Native $Cli @('filesystem', 'v2alpha1', $Method, "@$reqFile")
    [pscustomobject]@{ Code = $r.Code; Out = ($r.Out -join ' | ') }
}
# Removes what this script made at $path. A link is removed as a link and
# never entered: Windows PowerShell's Remove-Item -Recurse follows a
# directory link into its target, and here links point at the kubelet
# directory.
function Remove-Scratch([string] $path) {
    $it = Get-Item -Force -LiteralPath $path -ErrorAction SilentlyContinue
    if ($null -eq $it) { return }
    if ($it.Attributes -band [IO.FileAttributes]::ReparsePoint) { $it.Delete(); return }
    if ($it.Attributes -band [IO.FileAttributes]::Directory) {
        foreach ($c in @(Get-ChildItem -Force -LiteralPath $path)) { Remove-Scratch $c.FullName }
    }
    Remove-Item -Force -LiteralPath $path
}
function Test-Link([string] $path) {
    $it = Get-Item -Force -LiteralPath $path -ErrorAction SilentlyContinue
    ($null -ne $it) -and [bool]($it.Attributes -band [IO.FileAttributes]::ReparsePoint)
}

if (-not (@([IO.Directory]::GetFiles('\\.\pipe\')) -like '*\csi-proxy-filesystem-v2alpha1')) {
    throw 'no \\.\pipe\csi-proxy-filesystem-v2alpha1: start csi-proxy.exe with the filesystem group first'
}
$base = Join-Path $Kubelet 'plugins\csi-proxy-race'
Remove-Scratch $base
Remove-Scratch $Outside
New-Item -ItemType Directory -Force $base, $Outside, (Join-Path $base 'src') | Out-Null

# --- 1. links as Windows makes them ------------------------------------------
Claim 'DRIVER-CONTRACTS fact 9 and docs/compatibility.md "Links": CreateSymlink makes the link at target_path pointing at source_path, a directory link for a directory source'
$src = Join-Path $base 'src'
$srcFile = Join-Path $base 'src-file.txt'
Set-Content -LiteralPath $srcFile -Value 'x'
$dl = Join-Path $base 'dirlink'
$fl = Join-Path $base 'filelink'
$r = Rpc 'CreateSymlink' @{ source_path = $src; target_path = $dl }
Check ($r.Code -eq 0) 'CreateSymlink of a directory' $r.Out
$i = Get-Item -Force $dl -ErrorAction SilentlyContinue
Check ($null -ne $i -and "$($i.LinkType)" -eq 'SymbolicLink' -and [bool]($i.Attributes -band [IO.FileAttributes]::Directory)) `
    '... is a directory symbolic link at target_path' "$($i | Format-List * | Out-String)"
if ($null -ne $i) { Check (@($i.Target)[0] -ieq $src) "... pointing at source_path $src" "$(@($i.Target)[0])" }
$r = Rpc 'CreateSymlink' @{ source_path = $srcFile; target_path = $fl }
Check ($r.Code -eq 0) 'CreateSymlink of a file' $r.Out
$i = Get-Item -Force $fl -ErrorAction SilentlyContinue
Check ($null -ne $i -and "$($i.LinkType)" -eq 'SymbolicLink' -and -not ($i.Attributes -band [IO.FileAttributes]::Directory)) `
    '... is a file symbolic link (as upstream''s os.Symlink: the kind follows the source)' "$($i | Format-List * | Out-String)"

Claim 'docs/compatibility.md "Status codes": CreateSymlink onto an existing path is ALREADY_EXISTS'
$r = Rpc 'CreateSymlink' @{ source_path = $src; target_path = $dl }
Check ($r.Code -eq 6 -and $r.Out -like '*already exists*') 'CreateSymlink onto an existing path is ALREADY_EXISTS' $r.Out

Claim 'DRIVER-CONTRACTS fact 11(b): Rmdir with force deletes a symlink without touching its target'
$r = Rpc 'Rmdir' @{ path = $dl; force = $true }
Check ($r.Code -eq 0 -and -not (Test-Path -LiteralPath $dl) -and (Test-Path -LiteralPath $src)) 'Rmdir of the link removes the link, not its target' $r.Out

# --- 2. a parent swapped for a junction --------------------------------------
# The job alternates the name $dir between the real directory (kept as
# "$dir.real" while away) and a junction to $target, as fast as it can.
# While "$dir.pause" exists it stops with $dir real and says so with
# "$dir.paused", which holds how many junctions it has made so far. A step
# that fails (a handle the service holds) is put right at the top of the
# next round.
function Start-Swapper([string] $dir, [string] $target) {
    Start-Job -ArgumentList $dir, $target -ScriptBlock {
        param($dir, $target)
        $real = "$dir.real"
        $pause = "$dir.pause"
        $paused = "$dir.paused"
        $swaps = 0
        New-Item -ItemType Directory -Force $dir | Out-Null
        while ($true) {
            try {
                $it = Get-Item -Force -LiteralPath $dir -ErrorAction SilentlyContinue
                if ($null -ne $it -and ($it.Attributes -band [IO.FileAttributes]::ReparsePoint)) {
                    [IO.Directory]::Delete($dir) # the junction only, never its target
                    $it = $null
                }
                if ($null -ne $it -and [IO.Directory]::Exists($real) -and @([IO.Directory]::GetFileSystemEntries($dir)).Count -eq 0) {
                    [IO.Directory]::Delete($dir) # what a junction that failed half-way left
                    $it = $null
                }
                if ($null -eq $it -and [IO.Directory]::Exists($real)) { [IO.Directory]::Move($real, $dir) }
                if ([IO.File]::Exists($pause)) {
                    [IO.File]::WriteAllText("$paused.tmp", "$swaps")
                    [IO.File]::Move("$paused.tmp", $paused) # seen whole, or not at all
                    while ([IO.File]::Exists($pause)) { Start-Sleep -Milliseconds 1 }
                    [IO.File]::Delete($paused)
                    continue
                }
                [IO.Directory]::Move($dir, $real)
                New-Item -ItemType Junction -Path $dir -Target $target | Out-Null
                $swaps++
                [IO.Directory]::Delete($dir)
                [IO.Directory]::Move($real, $dir)
            } catch { Start-Sleep -Milliseconds 1 }
        }
    }
}
# Pauses the job with $dir the real directory (30 s at most); the number of
# junctions it has made so far.
function Suspend-Swapper($job, [string] $dir) {
    [IO.File]::WriteAllText("$dir.pause", '')
    $until = (Get-Date).AddSeconds(30)
    while (-not [IO.File]::Exists("$dir.paused")) {
        if ((Get-Date) -gt $until -or "$($job.State)" -in 'Completed', 'Failed', 'Stopped') {
            throw "the junction swapper did not pause (job $($job.State)): $(Receive-Job $job -ErrorAction SilentlyContinue 2>&1 | Out-String)"
        }
        Start-Sleep -Milliseconds 1
    }
    [int] [IO.File]::ReadAllText("$dir.paused")
}
function Resume-Swapper([string] $dir) {
    [IO.File]::Delete("$dir.pause")
    while ([IO.File]::Exists("$dir.paused")) { Start-Sleep -Milliseconds 1 }
}
function Stop-Swapper($job, [string] $dir) {
    Stop-Job $job; Remove-Job -Force $job
    if (Test-Link $dir) { [IO.Directory]::Delete($dir) }
    if ([IO.Directory]::Exists("$dir.real")) {
        if ([IO.Directory]::Exists($dir) -and @([IO.Directory]::GetFileSystemEntries($dir)).Count -eq 0) { [IO.Directory]::Delete($dir) }
        [IO.Directory]::Move("$dir.real", $dir)
    }
    foreach ($f in "$dir.pause", "$dir.paused", "$dir.paused.tmp") { Remove-Item -Force -LiteralPath $f -ErrorAction SilentlyContinue }
}
# What a try may not touch: made outside before the mode's first try, and
# again after an escape.
function Plant([string] $mode) {
    foreach ($c in @(Get-ChildItem -Force -LiteralPath $Outside)) { Remove-Scratch $c.FullName }
    switch ($mode) {
        { $_ -in 'RmdirForce', 'RmdirContents' } {
            New-Item -ItemType Directory -Force (Join-Path $Outside 'v\sub') | Out-Null
            Set-Content -LiteralPath (Join-Path $Outside 'v\sub\keep') -Value 'keep'
        }
        'RmdirFile' { Set-Content -LiteralPath (Join-Path $Outside 'v') -Value 'keep' }
    }
}
function Touched([string] $mode) {
    switch ($mode) {
        { $_ -in 'RmdirForce', 'RmdirContents' } { return -not (Test-Path -LiteralPath (Join-Path $Outside 'v\sub\keep')) }
        'RmdirFile' { return -not (Test-Path -LiteralPath (Join-Path $Outside 'v')) }
        default { return (Test-Path -LiteralPath (Join-Path $Outside 'v')) }
    }
}

Claim 'docs/security-model.md 8, "Confinement acts on what it checked": a parent swapped for a junction after the check leads to a refusal, never to a write outside the roots'
$d = Join-Path $base 'd'
$v = Join-Path $d 'v'
$job = Start-Swapper $d $Outside
try {
    foreach ($mode in 'RmdirForce', 'RmdirFile', 'RmdirContents', 'Mkdir', 'MkdirDeep', 'CreateSymlink') {
        Plant $mode
        $escapes = 0
        $okCalls = 0
        $swapsBefore = -1
        $swaps = 0
        for ($n = 0; $n -lt $Tries; $n++) {
            # with d real: the last try's v goes, this try's input is made
            $swaps = Suspend-Swapper $job $d
            if ($swapsBefore -lt 0) { $swapsBefore = $swaps }
            Remove-Scratch $v
            switch ($mode) {
                { $_ -in 'RmdirForce', 'RmdirContents' } { New-Item -ItemType Directory -Force (Join-Path $v 'sub') | Out-Null }
                'RmdirFile' { Set-Content -LiteralPath $v -Value 'x' }
            }
            Resume-Swapper $d
            switch ($mode) {
                'RmdirForce' { $r = Rpc 'Rmdir' @{ path = $v; force = $true } }
                'RmdirFile' { $r = Rpc 'Rmdir' @{ path = $v } }
                'RmdirContents' { $r = Rpc 'RmdirContents' @{ path = $v } }
                'Mkdir' { $r = Rpc 'Mkdir' @{ path = $v } }
                'MkdirDeep' { $r = Rpc 'Mkdir' @{ path = (Join-Path $v 'w') } }
                'CreateSymlink' { $r = Rpc 'CreateSymlink' @{ source_path = $src; target_path = $v } }
            }
            if ($r.Code -eq 0) { $okCalls++ }
            if (Touched $mode) { $escapes++; Plant $mode }
        }
        Check ($escapes -eq 0) "$mode below a parent swapped for a junction: nothing outside touched in $Tries tries ($okCalls answered OK)" "$escapes escapes"
        $swaps = (Suspend-Swapper $job $d) - $swapsBefore
        Resume-Swapper $d
        Check ($swaps -gt 0) "... while d was swapped for a junction $swaps times" 'the swapper made no junction: nothing was raced'
    }
} finally {
    Stop-Swapper $job $d
}

# --- 3. a name swapped for a junction to the kubelet directory -------------
Claim 'docs/security-model.md 6 and 8: the kubelet directory is never emptied, also through a name swapped for a junction to it after the check'
$keep = Join-Path $Kubelet 'pods\csi-proxy-race-keep'
New-Item -ItemType Directory -Force $keep | Out-Null
Set-Content -LiteralPath (Join-Path $keep 'marker') -Value 'keep'
$up = Join-Path $base 'up'
$job = Start-Swapper $up $Kubelet
$lost = 0
$swaps = 0
try {
    $swapsBefore = Suspend-Swapper $job $up   # the job runs
    Resume-Swapper $up
    for ($n = 0; $n -lt $Tries; $n++) {
        $r = Rpc 'RmdirContents' @{ path = $up }
        if (-not (Test-Path -LiteralPath (Join-Path $keep 'marker'))) {
            $lost++
            New-Item -ItemType Directory -Force $keep | Out-Null
            Set-Content -LiteralPath (Join-Path $keep 'marker') -Value 'keep'
        }
    }
    $swaps = (Suspend-Swapper $job $up) - $swapsBefore
} finally {
    Stop-Swapper $job $up
}
Check ($lost -eq 0) "RmdirContents of a name swapped for a junction to $Kubelet never empties it ($Tries tries)" "$lost times emptied"
Check ($swaps -gt 0) "... while the name was swapped for a junction $swaps times" 'the swapper made no junction: nothing was raced'

Remove-Scratch $base
Remove-Scratch $Outside
Remove-Scratch $keep
Remove-Item -Force $reqFile -ErrorAction SilentlyContinue
Complete-Tests
