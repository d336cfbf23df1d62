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
       handle (NtCreateFile + FSCTL_SET_REPARSE_POINT, winapi/fs_write_win32.c);
    2. the race: a background job owns <kubelet>\plugins\csi-proxy-race and
       keeps swapping its directory d for a junction to a directory outside
       the roots (a junction needs no privilege) while Rmdir (force), Rmdir
       of a file, RmdirContents, Mkdir (one and two levels) and
       CreateSymlink run below d, -Tries times each: nothing outside may be
       created, emptied or removed (winapi/fs.h, cp_fs_guard);
    3. RmdirContents of a name swapped for a junction to the kubelet
       directory never empties the kubelet directory.
  Prints "ok - ..." / "not ok - ..." and "N passed, N failed"; exits 1 on
  any failure. Record the result (date, Windows build, output) in README.md.
#>
param(
    [Parameter(Mandatory = $true)] [string] $Cli,
    [string] $Kubelet = 'C:\var\lib\kubelet',
    [string] $Outside = 'C:\csi-proxy-race-outside',
    [int] $Tries = 300
)
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$script:pass = 0
$script:fail = 0
function Ok([string] $name) { $script:pass++; Write-Output "ok - $name" }
function Bad([string] $name, [string] $why) { $script:fail++; Write-Output "not ok - $name"; if ($why) { Write-Output "    $why" } }
function Check([bool] $cond, [string] $name, [string] $why = '') { if ($cond) { Ok $name } else { Bad $name $why } }

# The request goes through a file: PowerShell 5.1 mangles quotes in native arguments.
$reqFile = Join-Path $env:TEMP 'csi-proxy-fs-rpc.json'
function Rpc([string] $Method, $Body) {
    [IO.File]::WriteAllText($reqFile, ($Body | ConvertTo-Json -Compress -Depth 4))
    $out = @(& $Cli filesystem v2alpha1 $Method "@$reqFile" 2>&1 | ForEach-Object { "$_" })
    [pscustomobject]@{ Code = $LASTEXITCODE; Out = ($out -join ' | ') }
}

$base = Join-Path $Kubelet 'plugins\csi-proxy-race'
Remove-Item -Recurse -Force $base, $Outside -ErrorAction SilentlyContinue
New-Item -ItemType Directory -Force $base, $Outside, (Join-Path $base 'src') | Out-Null

# --- 1. links as Windows makes them ------------------------------------------
$src = Join-Path $base 'src'
$srcFile = Join-Path $base 'src-file.txt'
Set-Content -LiteralPath $srcFile -Value 'x'
$dl = Join-Path $base 'dirlink'
$fl = Join-Path $base 'filelink'
$r = Rpc 'CreateSymlink' @{ source_path = $src; target_path = $dl }
Check ($r.Code -eq 0) 'CreateSymlink of a directory' $r.Out
$i = Get-Item -Force $dl -ErrorAction SilentlyContinue
Check ($null -ne $i -and "$($i.LinkType)" -eq 'SymbolicLink' -and ($i.Attributes -band [IO.FileAttributes]::Directory)) `
    '... is a directory symbolic link' "$($i | Format-List * | Out-String)"
if ($null -ne $i) { Check (@($i.Target)[0] -ieq $src) "... pointing at $src" "$(@($i.Target)[0])" }
$r = Rpc 'CreateSymlink' @{ source_path = $srcFile; target_path = $fl }
Check ($r.Code -eq 0) 'CreateSymlink of a file' $r.Out
$i = Get-Item -Force $fl -ErrorAction SilentlyContinue
Check ($null -ne $i -and "$($i.LinkType)" -eq 'SymbolicLink' -and -not ($i.Attributes -band [IO.FileAttributes]::Directory)) `
    '... is a file symbolic link (as upstream: the kind follows the source)' "$($i | Format-List * | Out-String)"
$r = Rpc 'CreateSymlink' @{ source_path = $src; target_path = $dl }
Check ($r.Code -eq 6 -and $r.Out -like '*already exists*') 'CreateSymlink onto an existing path is ALREADY_EXISTS' $r.Out
$r = Rpc 'Rmdir' @{ path = $dl; force = $true }
Check ($r.Code -eq 0 -and -not (Test-Path -LiteralPath $dl) -and (Test-Path -LiteralPath $src)) 'Rmdir of the link removes the link, not its target' $r.Out

# --- 2. a parent swapped for a junction --------------------------------------
# The job alternates the name d between the real directory (kept as real
# while away) and a junction to $Outside, as fast as it can.
function Start-Swapper([string] $dir, [string] $target) {
    Start-Job -ArgumentList $dir, $target -ScriptBlock {
        param($dir, $target)
        $real = "$dir.real"
        New-Item -ItemType Directory -Force $dir | Out-Null
        while ($true) {
            try {
                [IO.Directory]::Move($dir, $real)
                New-Item -ItemType Junction -Path $dir -Target $target | Out-Null
                [IO.Directory]::Delete($dir) # the junction only, never its target
                [IO.Directory]::Move($real, $dir)
            } catch { Start-Sleep -Milliseconds 1 }
        }
    }
}
function Stop-Swapper($job, [string] $dir) {
    Stop-Job $job; Remove-Job -Force $job
    $real = "$dir.real"
    $it = Get-Item -Force $dir -ErrorAction SilentlyContinue
    if ($null -ne $it -and ($it.Attributes -band [IO.FileAttributes]::ReparsePoint)) { [IO.Directory]::Delete($dir) }
    if (Test-Path -LiteralPath $real) { [IO.Directory]::Move($real, $dir) }
}
function Plant([string] $mode) {
    Remove-Item -Recurse -Force (Join-Path $Outside '*') -ErrorAction SilentlyContinue
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

$d = Join-Path $base 'd'
$job = Start-Swapper $d $Outside
Start-Sleep -Milliseconds 500
foreach ($mode in 'RmdirForce', 'RmdirFile', 'RmdirContents', 'Mkdir', 'MkdirDeep', 'CreateSymlink') {
    Plant $mode
    $escapes = 0
    $okCalls = 0
    for ($n = 0; $n -lt $Tries; $n++) {
        $v = Join-Path $d 'v'
        switch ($mode) {
            'RmdirForce' { New-Item -ItemType Directory -Force (Join-Path $v 'sub') -ErrorAction SilentlyContinue | Out-Null
                           $r = Rpc 'Rmdir' @{ path = $v; force = $true } }
            'RmdirFile' { Set-Content -LiteralPath $v -Value 'x' -ErrorAction SilentlyContinue
                          $r = Rpc 'Rmdir' @{ path = $v } }
            'RmdirContents' { New-Item -ItemType Directory -Force (Join-Path $v 'sub') -ErrorAction SilentlyContinue | Out-Null
                              $r = Rpc 'RmdirContents' @{ path = $v } }
            'Mkdir' { $r = Rpc 'Mkdir' @{ path = $v } }
            'MkdirDeep' { $r = Rpc 'Mkdir' @{ path = (Join-Path $v 'w') } }
            'CreateSymlink' { $r = Rpc 'CreateSymlink' @{ source_path = $src; target_path = $v } }
        }
        if ($r.Code -eq 0) { $okCalls++ }
        if (Touched $mode) { $escapes++; Plant $mode }
        # the real directory's own copy goes for the next try (wherever it is now)
        foreach ($p in (Join-Path $d 'v'), (Join-Path "$d.real" 'v')) {
            $it = Get-Item -Force $p -ErrorAction SilentlyContinue
            if ($null -ne $it -and -not ((Get-Item -Force (Split-Path $p)).Attributes -band [IO.FileAttributes]::ReparsePoint)) {
                if ($it.Attributes -band [IO.FileAttributes]::ReparsePoint) { $it.Delete() } else { Remove-Item -Recurse -Force $p -ErrorAction SilentlyContinue }
            }
        }
    }
    Check ($escapes -eq 0) "$mode below a parent swapped for a junction: nothing outside touched in $Tries tries ($okCalls answered OK)" "$escapes escapes"
}
Stop-Swapper $job $d

# --- 3. a name swapped for a junction to the kubelet directory -------------
$keep = Join-Path $Kubelet 'pods\csi-proxy-race-keep'
New-Item -ItemType Directory -Force $keep | Out-Null
Set-Content -LiteralPath (Join-Path $keep 'marker') -Value 'keep'
$up = Join-Path $base 'up'
$job = Start-Swapper $up $Kubelet
Start-Sleep -Milliseconds 500
$lost = 0
for ($n = 0; $n -lt $Tries; $n++) {
    $r = Rpc 'RmdirContents' @{ path = $up }
    if (-not (Test-Path -LiteralPath (Join-Path $keep 'marker'))) {
        $lost++
        New-Item -ItemType Directory -Force $keep | Out-Null
        Set-Content -LiteralPath (Join-Path $keep 'marker') -Value 'keep'
    }
}
Stop-Swapper $job $up
Check ($lost -eq 0) "RmdirContents of a name swapped for a junction to $Kubelet never empties it ($Tries tries)" "$lost times emptied"

Remove-Item -Recurse -Force $base, $Outside, $keep -ErrorAction SilentlyContinue
Remove-Item -Force $reqFile -ErrorAction SilentlyContinue
Write-Output "$($script:pass) passed, $($script:fail) failed"
if ($script:fail -gt 0) { exit 1 }
