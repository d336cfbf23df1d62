/* fs_place.c - see fs_place.h. Portable: no Windows headers. */
#include "host/fs_place.h"

#include <stdlib.h>
#include <string.h>

static wchar_t fold(wchar_t c)
{
    return (c >= L'A' && c <= L'Z') ? (wchar_t)(c - L'A' + L'a') : c;
}

static bool same(const wchar_t *a, const wchar_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fold(a[i]) != fold(b[i]))
            return false;
    return true;
}

/* Length of s without trailing '\' (a drive root "X:\" gives 2). */
static size_t trimmed(const wchar_t *s, size_t n)
{
    while (n > 0 && s[n - 1] == L'\\')
        n--;
    return n;
}

/* True when p (plen, trimmed) is dir (dlen, trimmed) or lies inside it. A
 * path on a volume ("var\\lib") lies inside its root (dlen 0). */
static bool inside(const wchar_t *p, size_t plen, const wchar_t *dir, size_t dlen)
{
    return dlen == 0 || (plen >= dlen && same(p, dir, dlen) && (plen == dlen || p[dlen] == L'\\'));
}

/* "\\?\Volume{G}\" is the volume; the rest (no leading '\') follows. */
static size_t volume_len(const wchar_t *location)
{
    const wchar_t *brace = wcschr(location, L'}');
    if (wcsncmp(location, L"\\\\?\\Volume{", 11) != 0 || brace == NULL)
        return 0;
    return (size_t)(brace - location) + 1 + (brace[1] == L'\\');
}

/* head (hlen chars, trailing '\' dropped) + '\' + tail (leading '\'
 * dropped); "X:" alone becomes "X:\". */
static wchar_t *join(const wchar_t *head, size_t hlen, const wchar_t *tail)
{
    hlen = trimmed(head, hlen);
    while (*tail == L'\\')
        tail++;
    size_t tlen = trimmed(tail, wcslen(tail));
    wchar_t *out = malloc((hlen + tlen + 3) * sizeof(wchar_t));
    if (out == NULL)
        return NULL;
    memcpy(out, head, hlen * sizeof(wchar_t));
    size_t n = hlen;
    if (tlen > 0 || (hlen == 2 && head[1] == L':'))
        out[n++] = L'\\';
    memcpy(out + n, tail, tlen * sizeof(wchar_t));
    n += tlen;
    out[n] = L'\0';
    return out;
}

static wchar_t *copy(const wchar_t *s)
{
    return join(s, wcslen(s), L"");
}

/* The anchor text that names location, per rule 1, or NULL. */
static wchar_t *through_anchor(const wchar_t *location, size_t vlen, const cp_fs_anchor *anchors,
                               size_t n, bool *on_anchor_volume)
{
    const wchar_t *rest = location + vlen;
    size_t rlen = trimmed(rest, wcslen(rest));
    for (size_t i = 0; i < n; i++) {
        const wchar_t *al = anchors[i].location;
        size_t avl = al != NULL ? volume_len(al) : 0;
        if (avl == 0 || trimmed(al, avl) != trimmed(location, vlen) ||
            !same(al, location, trimmed(location, vlen)))
            continue;
        *on_anchor_volume = true;
        const wchar_t *arest = al + avl;
        size_t arlen = trimmed(arest, wcslen(arest));
        if (inside(rest, rlen, arest, arlen))
            return join(anchors[i].text, wcslen(anchors[i].text), rest + arlen);
    }
    return NULL;
}

wchar_t *cp_fs_place(const wchar_t *location, const wchar_t *via, const wchar_t *names,
                     const wchar_t *system_volume, const cp_fs_anchor *anchors, size_t n_anchors)
{
    size_t vlen = volume_len(location);
    if (vlen == 0)
        return copy(location);
    const wchar_t *rest = location + vlen;
    bool protect = false;
    wchar_t *named = through_anchor(location, vlen, anchors, n_anchors, &protect);
    if (named != NULL)
        return named;
    if (system_volume != NULL &&
        trimmed(system_volume, wcslen(system_volume)) == trimmed(location, vlen) &&
        same(system_volume, location, trimmed(location, vlen)))
        protect = true;

    size_t via_len = trimmed(via, wcslen(via));
    const wchar_t *best = NULL;
    size_t best_len = 0;
    bool best_through = false;
    for (const wchar_t *s = names; s != NULL && *s != L'\0'; s += wcslen(s) + 1) {
        size_t n = trimmed(s, wcslen(s));
        bool through = inside(via, via_len, s, n);
        if (protect) { /* rule 2: a drive letter, else a folder the path did not come through */
            bool letter = n == 2;
            if ((letter || !through) && (best == NULL || n < best_len))
                best = s, best_len = n;
        } else if (best == NULL || (through && (!best_through || n > best_len))) {
            best = s, best_len = n, best_through = through; /* rule 3 */
        }
    }
    if (best == NULL)
        return copy(location);
    named = join(best, best_len, rest);
    if (named == NULL || !protect)
        return named;
    size_t nlen = wcslen(named);
    for (size_t i = 0; i < n_anchors; i++) {
        const wchar_t *t = anchors[i].text;
        if (inside(named, trimmed(named, nlen), t, trimmed(t, wcslen(t)))) {
            free(named); /* hidden under a mount folder: no DOS name is true */
            return copy(location);
        }
    }
    return named;
}
