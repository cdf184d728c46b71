/* letterbox_tui.core.speed._scanio, the header's split: the same (key, value) pairs
 * core.header.parse_header gives a plainly well-formed header, found in the bytes read
 * (no Python object, no GIL). Letter bytes are hostile: every index is checked against the
 * length read. */
#include "_scanio.h"

/* The closing delimiter as core.header reads it: a '\n', then '---', then any CRs, then
 * '\n' (or, when `at_end_ok`, the end of the data). Returns the index of the '\n' that
 * starts the match, searching from `from`, or -1; `*end` is set past the match. */
Py_ssize_t
scanio_find_close(const char *b, Py_ssize_t n, Py_ssize_t from, int at_end_ok, Py_ssize_t *end)
{
    Py_ssize_t i = from;
    while (i < n) {
        const char *nl = memchr(b + i, '\n', (size_t)(n - i));
        if (nl == NULL)
            return -1;
        i = nl - b;
        if (i + 3 < n && b[i + 1] == '-' && b[i + 2] == '-' && b[i + 3] == '-') {
            Py_ssize_t j = i + 4;
            while (j < n && b[j] == '\r')
                j++;
            if (j < n && b[j] == '\n') {
                *end = j + 1;
                return i;
            }
            if (j == n && at_end_ok) {
                *end = n;
                return i;
            }
        }
        i++;
    }
    return -1;
}

static int parse_spans(item *it, span *f);

/* The fast path. Sets it->f and returns the number of fields, or -1 when the header is
 * not plainly well formed (parse_header then judges it, and names any error). */
int
scanio_parse_fast(item *it)
{
    span scratch[MAX_FIELDS];
    int nf = parse_spans(it, scratch);
    if (nf > 0) {
        it->f = malloc((size_t)nf * sizeof(span));
        if (it->f == NULL)
            return -1;
        memcpy(it->f, scratch, (size_t)nf * sizeof(span));
    }
    return nf;
}

/* parse_fast's work, the fields written to `f` (room for MAX_FIELDS). */
static int
parse_spans(item *it, span *f)
{
    const char *b = it->buf;
    Py_ssize_t n = it->len, p, start, close, end = 0, ls;
    int nf = 0;

    if (n < 4 || b[0] != '-' || b[1] != '-' || b[2] != '-')
        return -1;
    p = 3;
    while (p < n && b[p] == '\r')
        p++;
    if (p >= n || b[p] != '\n')
        return -1;
    start = p + 1;
    close = scanio_find_close(b, n, start - 1, 1, &end);
    if (close < 0 || end > MAX_HEADER)
        return -1;
    /* field lines: [start, close + 1), each ended by a '\n' */
    ls = start;
    while (ls <= close) {
        const char *nl = memchr(b + ls, '\n', (size_t)(close + 1 - ls));
        Py_ssize_t le, ce, q, ks, ke, vs, ve, k;
        if (nl == NULL)
            return -1;
        le = nl - b;
        if (le - ls >= MAX_LINE)
            return -1;
        ce = le;
        while (ce > ls && b[ce - 1] == '\r')
            ce--;
        for (q = ls; q < ce; q++) {
            unsigned char c = (unsigned char)b[q];
            if (c < 0x20 || c > 0x7e)
                return -1;  /* a control, a CR inside the line, or not ASCII */
        }
        for (q = ls; q < ce && b[q] == ' '; q++)
            ;
        if (q == ce) {  /* blank: skipped */
            ls = le + 1;
            continue;
        }
        ks = ls;
        if (!((b[ks] >= 'A' && b[ks] <= 'Z') || (b[ks] >= 'a' && b[ks] <= 'z')))
            return -1;
        ke = ks + 1;
        while (ke < ce) {
            char c = b[ke];
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')
                ke++;
            else
                break;
        }
        if (ke >= ce || b[ke] != ':')
            return -1;
        vs = ke + 1;
        ve = ce;
        while (vs < ve && b[vs] == ' ')
            vs++;
        while (ve > vs && b[ve - 1] == ' ')
            ve--;
        if (nf >= MAX_FIELDS)
            return -1;
        for (k = 0; k < nf; k++) {
            if (f[k].kl == ke - ks && memcmp(b + f[k].ks, b + ks, (size_t)(ke - ks)) == 0)
                return -1;  /* a repeated key: parse_header names it */
        }
        f[nf].ks = (int32_t)ks;
        f[nf].kl = (int32_t)(ke - ks);
        f[nf].vs = (int32_t)vs;
        f[nf].vl = (int32_t)(ve - vs);
        nf++;
        ls = le + 1;
    }
    it->end = end;
    return nf;
}
