/* letterbox_tui.core.speed._scanio: the scan's per-file system calls, in C, on several threads.
 *
 * An optional accelerator for core.scan (through core.speed.accel) and core.speed.memo; the pure-Python code beside it does
 * the same work and is what runs when this module is not built. Nothing here decides what a
 * letter means:
 *
 * read_headers(dir_fd, names, threads) opens each name relative to dir_fd (O_NOFOLLOW,
 *   O_NONBLOCK), fstats it, and for a regular file reads its first bytes exactly as
 *   core.scan.read_header_bytes does. A header of printable ASCII that is plainly well formed
 *   is split into its (key, value) pairs here ("the fast path", the same pairs
 *   core.header.parse_header gives); anything else comes back as bytes for parse_header.
 *   Each result is (stage, errno, mode, size, mtime_ns, inode, ctime_ns, data, fields):
 *   stage 0 ok, 1 open failed, 2 fstat failed, 3 read failed; data is None for a file that
 *   is not regular; fields is None when parse_header must judge the data. With fields, data
 *   is the header through its closing line (what the cache hashes).
 *
 * read_headers(..., where=(seat, folder, prefix)) also makes the Letter itself, in place
 *   of the fields, for a header that plainly meets core.letters' field table (read once by
 *   configure(Letter, FIELD_SLOTS, FILE_SLOTS); see make_letter: the same letter
 *   core.letters.build makes; everything else is left to build()).
 *
 * read_start(dir_fd, names) / read_finish(batch, where=None): read_headers in two halves,
 *   the reading done by a thread of its own in between (the scan reads ahead with these).
 *
 * stat_packed(dir_fd, names, threads) lstats each name relative to dir_fd and returns
 *   (size, mtime_ns, inode, ctime_ns) of every one as little-endian signed 64-bit words, or
 *   None when any stat fails or a value does not fit (core.speed.memo compares these bytes).
 *
 * The system calls run without the GIL, on up to `threads` threads, CHUNK files at a time
 * (so memory stays bounded whatever the folder's size). Letter bytes are hostile: every
 * index below is checked against the length read, and nothing is ever written past a buffer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIRST_READ 4096
#define MAX_HEADER 32768
#define READ_LIMIT (MAX_HEADER + 8)
#define MAX_LINE 4096
#define MAX_FIELDS 128
#define CHUNK 2048
#define MAX_THREADS 8

typedef struct {
    int32_t ks, kl, vs, vl;
} span;

typedef struct {
    const char *name;
    int stage;
    int err;
    struct stat st;
    char *buf;
    Py_ssize_t len;
    Py_ssize_t end;  /* fast path: the end of the closing '---' line */
    int nf;          /* fast path: number of fields; -1 when parse_header must judge */
    span *f;         /* fast path: the nf fields (malloc'd, exactly nf) */
} item;

/* Everything an item holds besides itself. */
static void
item_free(item *it)
{
    free(it->buf);
    free(it->f);
    it->buf = NULL;
    it->f = NULL;
}

/* ---------------------------------------------------------------------------------- */
/* The closing delimiter as core.header reads it: a '\n', then '---', then any CRs, then
 * '\n' (or, when `at_end_ok`, the end of the data). Returns the index of the '\n' that
 * starts the match, searching from `from`, or -1; `*end` is set past the match. */
static Py_ssize_t
find_close(const char *b, Py_ssize_t n, Py_ssize_t from, int at_end_ok, Py_ssize_t *end)
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
static int
parse_fast(item *it)
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
    close = find_close(b, n, start - 1, 1, &end);
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

static ssize_t
read_some(int fd, char *buf, size_t n)
{
    ssize_t r;
    do {
        r = read(fd, buf, n);
    } while (r < 0 && errno == EINTR);
    return r;
}

/* core.scan.read_header_bytes: one read of FIRST_READ, more only while no closing
 * delimiter ended by a line ending has been seen, never past READ_LIMIT. */
static void
read_item(int dfd, item *it)
{
    int fd, more;
    ssize_t r;
    Py_ssize_t endpos;
    char first[FIRST_READ];

    it->nf = -1;
    do {
        fd = openat(dfd, it->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        it->stage = 1;
        it->err = errno;
        return;
    }
    if (fstat(fd, &it->st) != 0) {
        it->stage = 2;
        it->err = errno;
        close(fd);
        return;
    }
    if (!S_ISREG(it->st.st_mode)) {
        close(fd);
        return;
    }
    /* The first read goes to the stack; the item keeps a copy of just what was read
     * (a fresh 4 KiB block a file would cost the process a page fault a file). */
    r = read_some(fd, first, FIRST_READ);
    if (r < 0) {
        it->stage = 3;
        it->err = errno;
        close(fd);
        return;
    }
    it->len = r;
    more = r > 0 && r < READ_LIMIT && find_close(first, r, 3, 0, &endpos) < 0;
    it->buf = malloc(more ? READ_LIMIT : (r > 0 ? (size_t)r : 1));
    if (it->buf == NULL) {
        it->stage = 3;
        it->err = ENOMEM;
        close(fd);
        return;
    }
    memcpy(it->buf, first, (size_t)r);
    while (more && it->len < READ_LIMIT && find_close(it->buf, it->len, 3, 0, &endpos) < 0) {
        r = read_some(fd, it->buf + it->len, (size_t)(READ_LIMIT - it->len));
        if (r < 0) {
            it->stage = 3;
            it->err = errno;
            close(fd);
            return;
        }
        if (r == 0)
            break;
        it->len += r;
    }
    close(fd);
    it->nf = parse_fast(it);
}

typedef struct {
    int dfd;
    item *items;
    Py_ssize_t n;
    Py_ssize_t next;  /* shared work counter */
    int mode;         /* 0 read_headers, 1 stat_packed */
} job;

#define GRAB 8

static void *
worker(void *arg)
{
    job *j = arg;
    for (;;) {
        Py_ssize_t i = __atomic_fetch_add(&j->next, GRAB, __ATOMIC_RELAXED), k;
        if (i >= j->n)
            break;
        for (k = i; k < i + GRAB && k < j->n; k++) {
            item *it = &j->items[k];
            if (j->mode == 0) {
                read_item(j->dfd, it);
            }
            else if (fstatat(j->dfd, it->name, &it->st, AT_SYMLINK_NOFOLLOW) != 0) {
                it->stage = 1;
                it->err = errno;
            }
        }
    }
    return NULL;
}

/* Run the job on `threads` threads (this one included), the GIL released. */
static void
run_job(job *j, int threads)
{
    pthread_t tids[MAX_THREADS];
    int started = 0, t;
    Py_BEGIN_ALLOW_THREADS
    for (t = 1; t < threads && j->n > GRAB * t; t++) {
        if (pthread_create(&tids[started], NULL, worker, j) != 0)
            break;
        started++;
    }
    worker(j);
    for (t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    Py_END_ALLOW_THREADS
}

/* ---------------------------------------------------------------------------------- */

typedef struct {
    char text[48];
    Py_ssize_t len;
    PyObject *str;
    int known;  /* its row in the field table, or -1 */
} key_slot;

#define KEY_SLOTS 64
#define MAX_TABLE 32
#define MAX_KEY 31

/* ---------------------------------------------------------------------------------- */
/* Letters made here. core.letters.build is the definition, and core.letters' two tables
 * (FIELD_SLOTS, FILE_SLOTS) are read once by configure() (core.speed.accel does it at
 * import): which header key fills which Letter slot, and what its value must be for a
 * letter that gets no flag at all. For a header that plainly meets every row (the form
 * the protocol's own writer produces) the same Letter build() would make is made here,
 * without a Python call per letter; anything else is left to build(). The checks below
 * are subsets of the Python grammar (an id of at most 128 characters of [A-Za-z0-9_.:-],
 * a time written YYYY-MM-DDTHH:MM:SSZ): what they accept, grammar.py accepts the same. */

enum { KIND_TEXT, KIND_ID, KIND_REQUIRED, KIND_POINTER, KIND_TIME, KIND_SENT, KIND_LIST, N_KINDS };
static const char *const kind_names[N_KINDS] = {"text", "id", "required", "pointer", "time", "sent", "list"};
/* FILE_SLOTS, in this order */
enum { R_FIELDS, R_KEYS, R_VALUES, R_SEAT, R_FOLDER, R_PATH, R_NAME, R_FLAGS, R_MALFORMED, R_SIZE, R_MTIME,
       R_INODE, N_ROLES };

typedef struct {
    PyObject *type;                 /* Letter; NULL until configure(): then no letter is made here */
    int n;                          /* rows of the field table */
    char key[MAX_TABLE][MAX_KEY + 1];
    Py_ssize_t key_len[MAX_TABLE];
    int kind[MAX_TABLE];
    PyObject *slot[MAX_TABLE];      /* the member descriptor of each row's slot */
    PyObject *time_slot[MAX_TABLE]; /* and of its time's slot, or NULL */
    PyObject *role[N_ROLES];
} config;

static config cfg;

static void
config_clear(config *c)
{
    int i;
    Py_CLEAR(c->type);
    for (i = 0; i < MAX_TABLE; i++) {
        Py_CLEAR(c->slot[i]);
        Py_CLEAR(c->time_slot[i]);
    }
    for (i = 0; i < N_ROLES; i++)
        Py_CLEAR(c->role[i]);
    c->n = 0;
}

/* The member descriptor of `type`'s slot `name`, its name added to `seen` (which must
 * not hold it yet); NULL with an exception set. */
static PyObject *
slot_descriptor(PyObject *type, PyObject *name, PyObject *seen)
{
    PyObject *d;
    int dup = PySet_Contains(seen, name);
    if (dup != 0) {
        if (dup > 0)
            PyErr_Format(PyExc_ValueError, "slot %R is named twice", name);
        return NULL;
    }
    if (PySet_Add(seen, name) < 0)
        return NULL;
    d = PyObject_GetAttr(type, name);
    if (d != NULL && !Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%R is not a slot", name);
        Py_CLEAR(d);
    }
    return d;
}

/* configure(Letter, field_slots, file_slots): the tables of core.letters. Every slot of
 * Letter must be named exactly once; else ValueError, and no letter is made here. */
static PyObject *
configure(PyObject *self, PyObject *args)
{
    PyObject *type, *fields, *files, *seen = NULL, *all = NULL;
    config c;
    Py_ssize_t i;
    int k;

    memset(&c, 0, sizeof(c));
    config_clear(&cfg);  /* a failed configure leaves none */
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyType_Type, &type, &PyTuple_Type, &fields, &PyTuple_Type, &files))
        return NULL;
    if (PyTuple_GET_SIZE(fields) > MAX_TABLE || PyTuple_GET_SIZE(files) != N_ROLES) {
        PyErr_SetString(PyExc_ValueError, "field table too long, or not one slot per file role");
        return NULL;
    }
    seen = PySet_New(NULL);
    if (seen == NULL)
        return NULL;
    c.type = Py_NewRef(type);
    for (i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        PyObject *key, *slot, *kind, *time_slot;
        const char *text;
        Py_ssize_t len;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, i), "UUUU", &key, &slot, &kind, &time_slot))
            goto fail;
        text = PyUnicode_AsUTF8AndSize(key, &len);
        if (text == NULL)
            goto fail;
        if (len < 1 || len > MAX_KEY || !PyUnicode_IS_ASCII(key)) {
            PyErr_Format(PyExc_ValueError, "header key %R cannot be matched here", key);
            goto fail;
        }
        memcpy(c.key[i], text, (size_t)len);
        c.key_len[i] = len;
        c.kind[i] = -1;
        for (k = 0; k < N_KINDS; k++) {
            if (PyUnicode_CompareWithASCIIString(kind, kind_names[k]) == 0)
                c.kind[i] = k;
        }
        if (c.kind[i] < 0) {
            PyErr_Format(PyExc_ValueError, "unknown kind %R", kind);
            goto fail;
        }
        c.n = (int)i + 1;
        c.slot[i] = slot_descriptor(type, slot, seen);
        if (c.slot[i] == NULL)
            goto fail;
        if ((c.kind[i] == KIND_TIME || c.kind[i] == KIND_SENT) != (PyUnicode_GET_LENGTH(time_slot) > 0)) {
            PyErr_Format(PyExc_ValueError, "%R: a time slot for time kinds only", key);
            goto fail;
        }
        if (PyUnicode_GET_LENGTH(time_slot) > 0) {
            c.time_slot[i] = slot_descriptor(type, time_slot, seen);
            if (c.time_slot[i] == NULL)
                goto fail;
        }
    }
    for (k = 0; k < N_ROLES; k++) {
        PyObject *name = PyTuple_GET_ITEM(files, k);
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "file slots are names");
            goto fail;
        }
        c.role[k] = slot_descriptor(type, name, seen);
        if (c.role[k] == NULL)
            goto fail;
    }
    {   /* every slot of the type and its bases, each named once above */
        PyObject *mro = ((PyTypeObject *)type)->tp_mro;
        Py_ssize_t total = 0, m;
        for (m = 0; mro != NULL && m < PyTuple_GET_SIZE(mro); m++) {
            PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, m))->tp_dict;
            all = dict != NULL ? PyDict_GetItemString(dict, "__slots__") : NULL;  /* borrowed */
            if (all != NULL)
                total += PyUnicode_Check(all) ? 1 : PyObject_Length(all);
            if (PyErr_Occurred())
                goto fail;
        }
        all = NULL;
        k = total == PySet_GET_SIZE(seen);
    }
    if (!k) {
        PyErr_SetString(PyExc_ValueError, "the tables do not name every slot of the letter type");
        goto fail;
    }
    Py_DECREF(seen);
    cfg = c;
    Py_RETURN_NONE;
fail:
    Py_XDECREF(seen);
    config_clear(&c);
    return NULL;
}

/* Field names repeat in every letter: one str object per distinct name per call. `*known`
 * is the name's row in the field table, -1 for another name, -2 when it could not be kept
 * (then no letter is made here from this header). */
static PyObject *
key_object(key_slot *slots, int *used, const char *s, Py_ssize_t len, int *known)
{
    int i;
    for (i = 0; i < *used; i++) {
        if (slots[i].len == len && memcmp(slots[i].text, s, (size_t)len) == 0) {
            Py_INCREF(slots[i].str);
            *known = slots[i].known;
            return slots[i].str;
        }
    }
    PyObject *o = PyUnicode_DecodeASCII(s, len, "strict");
    if (o == NULL)
        return NULL;
    *known = -2;
    if (*used < KEY_SLOTS && len <= (Py_ssize_t)sizeof(slots[0].text)) {
        memcpy(slots[*used].text, s, (size_t)len);
        slots[*used].len = len;
        Py_INCREF(o);
        slots[*used].str = o;
        slots[*used].known = -1;
        for (i = 0; i < cfg.n; i++) {
            if (cfg.key_len[i] == len && memcmp(cfg.key[i], s, (size_t)len) == 0)
                slots[*used].known = i;
        }
        *known = slots[*used].known;
        (*used)++;
    }
    return o;
}

/* The key objects kept by key_object during one call. */
static void
release_keys(key_slot *slots, int used)
{
    int k;
    for (k = 0; k < used; k++)
        Py_DECREF(slots[k].str);
}

typedef struct {
    PyObject *seat, *folder, *prefix, *names;  /* borrowed from the caller's arguments */
    Py_ssize_t from;                           /* the index in names of the first item */
} builder;

/* spec: (seat, folder, path prefix); 1 when letters are to be made (configure() was
 * called), 0 when not, -1 with an exception set. */
static int
builder_init(builder *b, PyObject *spec, PyObject *names, Py_ssize_t from)
{
    memset(b, 0, sizeof(*b));
    if (!PyArg_ParseTuple(spec, "UUU", &b->seat, &b->folder, &b->prefix))
        return -1;
    b->names = names;
    b->from = from;
    return cfg.type != NULL;
}

static int
id_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == ':' || c == '-';
}

/* grammar.ID_RE: [A-Za-z0-9_.:-]{1,128} */
static int
valid_id(const char *s, Py_ssize_t n)
{
    Py_ssize_t i;
    if (n < 1 || n > 128)
        return 0;
    for (i = 0; i < n; i++) {
        if (!id_char((unsigned char)s[i]))
            return 0;
    }
    return 1;
}

static int
digits(const char *s, int n, int *out)
{
    int i, v = 0;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* YYYY-MM-DDTHH:MM:SSZ naming a real time (years 2 to 9998: the edges go to Python). */
static int
utc_time(const char *s, Py_ssize_t n, int *t)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap, dim;
    if (n != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z')
        return 0;
    if (!digits(s, 4, &t[0]) || !digits(s + 5, 2, &t[1]) || !digits(s + 8, 2, &t[2]) || !digits(s + 11, 2, &t[3]) ||
        !digits(s + 14, 2, &t[4]) || !digits(s + 17, 2, &t[5]))
        return 0;
    if (t[0] < 2 || t[0] > 9998 || t[1] < 1 || t[1] > 12 || t[3] > 23 || t[4] > 59 || t[5] > 59)
        return 0;
    leap = (t[0] % 4 == 0 && t[0] % 100 != 0) || t[0] % 400 == 0;
    dim = days[t[1] - 1] + (t[1] == 2 && leap);
    return t[2] >= 1 && t[2] <= dim;
}

/* Whether the header in `it` plainly meets every row of the field table for its file
 * (see above); pos[r]: the field index of row r's key, or -1. Times go to times[r]. */
static int
canonical(const item *it, const int *pos, int times[][6], int *has_time)
{
    const char *b = it->buf;
    Py_ssize_t nl = (Py_ssize_t)strlen(it->name);
    int r;

    for (r = 0; r < cfg.n; r++) {
        const span *f = pos[r] >= 0 ? &it->f[pos[r]] : NULL;
        Py_ssize_t vl = f != NULL ? f->vl : 0;
        has_time[r] = 0;
        switch (cfg.kind[r]) {
        case KIND_ID:
            if (vl == 0 || !valid_id(b + f->vs, vl) || nl != vl + 3 || memcmp(it->name, b + f->vs, (size_t)vl) != 0 ||
                memcmp(it->name + vl, ".md", 3) != 0)
                return 0;
            break;
        case KIND_REQUIRED:
            if (vl == 0)
                return 0;
            break;
        case KIND_POINTER:
            if (vl > 0 && !valid_id(b + f->vs, vl))
                return 0;
            break;
        case KIND_SENT:
            if (vl == 0)
                return 0;
            /* fall through */
        case KIND_TIME:
            if (vl > 0) {
                if (!utc_time(b + f->vs, vl, times[r]))
                    return 0;
                has_time[r] = 1;
            }
            break;
        case KIND_LIST:
            if (vl > 0)
                return 0;
            break;
        default:
            break;
        }
    }
    return 1;
}

static PyObject *
utc_datetime(const int *t)
{
    return PyDateTimeAPI->DateTime_FromDateAndTime(t[0], t[1], t[2], t[3], t[4], t[5], 0, PyDateTime_TimeZone_UTC,
                                                   PyDateTimeAPI->DateTimeType);
}

/* The Letter build() would make; NULL with an exception set. Steals nothing. */
static PyObject *
make_letter(builder *bl, PyObject *name, const int *pos, PyObject *keys, PyObject *values, int times[][6],
            const int *has_time, PyObject *size, PyObject *mtime, PyObject *inode)
{
    PyObject *v[N_ROLES] = {NULL};
    PyObject *letter = NULL, *empty = PyUnicode_New(0, 0), *none_tuple = PyTuple_New(0);
    descrsetfunc set;
    int k, ok = 0;

    if (empty == NULL || none_tuple == NULL)
        goto done;
    v[R_FIELDS] = Py_NewRef(Py_None);
    v[R_KEYS] = Py_NewRef(keys);
    v[R_VALUES] = Py_NewRef(values);
    v[R_SEAT] = Py_NewRef(bl->seat);
    v[R_FOLDER] = Py_NewRef(bl->folder);
    v[R_PATH] = PyUnicode_Concat(bl->prefix, name);
    v[R_NAME] = Py_NewRef(name);
    v[R_FLAGS] = Py_NewRef(none_tuple);
    v[R_MALFORMED] = Py_NewRef(none_tuple);
    v[R_SIZE] = Py_NewRef(size);
    v[R_MTIME] = Py_NewRef(mtime);
    v[R_INODE] = Py_NewRef(inode);
    if (v[R_PATH] == NULL)
        goto done;
    letter = ((PyTypeObject *)cfg.type)->tp_alloc((PyTypeObject *)cfg.type, 0);
    if (letter == NULL)
        goto done;
    for (k = 0; k < N_ROLES; k++) {
        set = Py_TYPE(cfg.role[k])->tp_descr_set;
        if (set(cfg.role[k], letter, v[k]) < 0)
            goto done;
    }
    for (k = 0; k < cfg.n; k++) {
        PyObject *value = cfg.kind[k] == KIND_LIST ? none_tuple : (pos[k] >= 0 ? PyTuple_GET_ITEM(values, pos[k]) : empty);
        set = Py_TYPE(cfg.slot[k])->tp_descr_set;
        if (set(cfg.slot[k], letter, value) < 0)
            goto done;
        if (cfg.time_slot[k] != NULL) {
            PyObject *when = has_time[k] ? utc_datetime(times[k]) : Py_NewRef(Py_None);
            int failed = when == NULL;
            if (!failed) {
                set = Py_TYPE(cfg.time_slot[k])->tp_descr_set;
                failed = set(cfg.time_slot[k], letter, when) < 0;
                Py_DECREF(when);
            }
            if (failed)
                goto done;
        }
    }
    ok = 1;
done:
    for (k = 0; k < N_ROLES; k++)
        Py_XDECREF(v[k]);
    Py_XDECREF(empty);
    Py_XDECREF(none_tuple);
    if (!ok)
        Py_CLEAR(letter);
    return letter;
}

/* One item's result: (stage, errno, mode, size, mtime_ns, inode, ctime_ns, data, fields),
 * where with a builder `fields` may be the Letter itself (see above). */
static PyObject *
result_of(item *it, key_slot *slots, int *used, builder *bl, Py_ssize_t index)
{
    PyObject *out = NULL, *data = NULL, *fields = NULL, *keys = NULL, *values = NULL;
    PyObject *mode = NULL, *size = NULL, *mtime = NULL, *inode = NULL, *ctime = NULL;
    int k;

    if (it->stage != 0) {
        Py_INCREF(Py_None);
        Py_INCREF(Py_None);
        return Py_BuildValue("(iiiLLKLNN)", it->stage, it->err, 0, (long long)0, (long long)0,
                             (unsigned long long)0, (long long)0, Py_None, Py_None);
    }
    mode = PyLong_FromLong((long)it->st.st_mode);
    size = PyLong_FromLongLong((long long)it->st.st_size);
    mtime = PyLong_FromLongLong((long long)it->st.st_mtim.tv_sec * 1000000000LL + it->st.st_mtim.tv_nsec);
    inode = PyLong_FromUnsignedLongLong((unsigned long long)it->st.st_ino);
    ctime = PyLong_FromLongLong((long long)it->st.st_ctim.tv_sec * 1000000000LL + it->st.st_ctim.tv_nsec);
    if (mode == NULL || size == NULL || mtime == NULL || inode == NULL || ctime == NULL)
        goto fail;
    if (it->buf == NULL) {  /* not a regular file: not read */
        data = Py_None;
        Py_INCREF(data);
        fields = Py_None;
        Py_INCREF(fields);
    }
    else if (it->nf >= 0) {
        int pos[MAX_TABLE], all_kept = 1, times[MAX_TABLE][6], has_time[MAX_TABLE];
        for (k = 0; k < MAX_TABLE; k++)
            pos[k] = -1;
        data = PyBytes_FromStringAndSize(it->buf, it->end);
        keys = PyTuple_New(it->nf);
        values = PyTuple_New(it->nf);
        if (data == NULL || keys == NULL || values == NULL)
            goto fail;
        for (k = 0; k < it->nf; k++) {
            span *f = &it->f[k];
            int known;
            PyObject *key = key_object(slots, used, it->buf + f->ks, f->kl, &known);
            if (key == NULL)
                goto fail;
            PyTuple_SET_ITEM(keys, k, key);
            PyObject *value = PyUnicode_DecodeASCII(it->buf + f->vs, f->vl, "strict");
            if (value == NULL)
                goto fail;
            PyTuple_SET_ITEM(values, k, value);
            if (known >= 0)
                pos[known] = k;  /* the fast path admits no repeated key */
            else if (known == -2)
                all_kept = 0;
        }
        if (bl != NULL && all_kept && canonical(it, pos, times, has_time)) {
            PyObject *name = PyList_GET_ITEM(bl->names, bl->from + index);
            fields = make_letter(bl, name, pos, keys, values, times, has_time, size, mtime, inode);
            if (fields == NULL)
                goto fail;
        }
        else {
            fields = PyTuple_New(it->nf);
            if (fields == NULL)
                goto fail;
            for (k = 0; k < it->nf; k++) {
                PyObject *pair = PyTuple_Pack(2, PyTuple_GET_ITEM(keys, k), PyTuple_GET_ITEM(values, k));
                if (pair == NULL)
                    goto fail;
                PyTuple_SET_ITEM(fields, k, pair);
            }
        }
    }
    else {
        data = PyBytes_FromStringAndSize(it->buf, it->len);
        if (data == NULL)
            goto fail;
        fields = Py_None;
        Py_INCREF(fields);
    }
    out = PyTuple_New(9);
    if (out == NULL)
        goto fail;
    PyTuple_SET_ITEM(out, 0, PyLong_FromLong(0));
    PyTuple_SET_ITEM(out, 1, PyLong_FromLong(0));
    PyTuple_SET_ITEM(out, 2, mode);
    PyTuple_SET_ITEM(out, 3, size);
    PyTuple_SET_ITEM(out, 4, mtime);
    PyTuple_SET_ITEM(out, 5, inode);
    PyTuple_SET_ITEM(out, 6, ctime);
    PyTuple_SET_ITEM(out, 7, data);
    PyTuple_SET_ITEM(out, 8, fields);
    Py_XDECREF(keys);
    Py_XDECREF(values);
    return out;
fail:
    Py_XDECREF(mode);
    Py_XDECREF(size);
    Py_XDECREF(mtime);
    Py_XDECREF(inode);
    Py_XDECREF(ctime);
    Py_XDECREF(data);
    Py_XDECREF(fields);
    Py_XDECREF(keys);
    Py_XDECREF(values);
    return NULL;
}

/* Names as file-system bytes (os.fsencode), kept alive by `holders`. */
static int
encode_names(PyObject *names, Py_ssize_t from, Py_ssize_t n, item *items, PyObject *holders)
{
    Py_ssize_t i;
    for (i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(names, from + i);
        PyObject *raw;
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "names must be str");
            return -1;
        }
        raw = PyUnicode_EncodeFSDefault(name);
        if (raw == NULL)
            return -1;
        if ((Py_ssize_t)strlen(PyBytes_AS_STRING(raw)) != PyBytes_GET_SIZE(raw)) {
            Py_DECREF(raw);
            PyErr_SetString(PyExc_ValueError, "embedded null byte in a name");
            return -1;
        }
        PyList_SET_ITEM(holders, i, raw);
        memset(&items[i], 0, sizeof(item));
        items[i].name = PyBytes_AS_STRING(raw);
    }
    return 0;
}

/* Names [from, from + n) of one chunk: encoded, then read (mode 0) or stat-ed (mode 1) on
 * `threads` threads. Returns the list keeping the encoded names alive (the caller drops
 * it once done with `items`), or NULL with an exception set. */
static PyObject *
run_chunk(int dfd, PyObject *names, Py_ssize_t from, Py_ssize_t n, item *items, int mode, int threads)
{
    PyObject *holders = PyList_New(n);
    job j;
    if (holders == NULL)
        return NULL;
    if (encode_names(names, from, n, items, holders) < 0) {
        Py_DECREF(holders);
        return NULL;
    }
    j.dfd = dfd;
    j.items = items;
    j.n = n;
    j.next = 0;
    j.mode = mode;
    run_job(&j, threads);
    return holders;
}

static int
clamp_threads(int threads)
{
    return threads < 1 ? 1 : (threads > MAX_THREADS ? MAX_THREADS : threads);
}

static PyObject *
read_headers(PyObject *self, PyObject *args)
{
    int dfd, threads = 2, used = 0;
    PyObject *names, *out = NULL, *spec = Py_None;
    Py_ssize_t total, from;
    item *items = NULL;
    key_slot slots[KEY_SLOTS];
    builder bl, *blp = NULL;

    if (!PyArg_ParseTuple(args, "iO!|iO", &dfd, &PyList_Type, &names, &threads, &spec))
        return NULL;
    names = PyList_GetSlice(names, 0, PyList_GET_SIZE(names));  /* a copy, as read_start */
    if (names == NULL)
        return NULL;
    if (spec != Py_None) {
        int making = builder_init(&bl, spec, names, 0);
        if (making < 0) {
            Py_DECREF(names);
            return NULL;
        }
        if (making)
            blp = &bl;
    }
    threads = clamp_threads(threads);
    total = PyList_GET_SIZE(names);
    out = PyList_New(total);
    items = PyMem_Calloc(CHUNK, sizeof(item));
    if (out == NULL || items == NULL)
        goto fail;
    for (from = 0; from < total; from += CHUNK) {
        Py_ssize_t n = total - from < CHUNK ? total - from : CHUNK, i;
        PyObject *holders = run_chunk(dfd, names, from, n, items, 0, threads);
        if (holders == NULL)
            goto fail;
        for (i = 0; i < n; i++) {
            PyObject *r = result_of(&items[i], slots, &used, blp, from + i);
            item_free(&items[i]);
            if (r == NULL) {
                for (i = i + 1; i < n; i++)
                    item_free(&items[i]);
                Py_DECREF(holders);
                goto fail;
            }
            PyList_SET_ITEM(out, from + i, r);
        }
        Py_DECREF(holders);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyMem_Free(items);
    release_keys(slots, used);
    Py_DECREF(names);
    return out;
}

/* ---------------------------------------------------------------------------------- */
/* read_start / read_finish: read_headers in two halves, so the caller can build letters
 * from one batch while the next is read. read_start encodes the names and starts one
 * thread that opens, fstats and reads them without the GIL (on a duplicate of dir_fd, so
 * the caller closing its descriptor early never points the thread at another file);
 * read_finish reads what is left beside that thread, waits for it and returns what
 * read_headers would have. A batch
 * dropped unfinished is waited for and freed by its capsule's destructor. */

#define PENDING "letterbox_tui.core.speed._scanio.pending"

typedef struct {
    job j;
    pthread_t tid;
    int running;        /* a thread is (or was) running the job, not yet joined */
    int finished;       /* read_finish took the results */
    PyObject *holders;  /* the encoded names, alive while the job may use them */
    PyObject *names;    /* the names themselves (a letter made here is named by one) */
} pending;

static void
pending_join(pending *p)
{
    if (p->running) {
        Py_BEGIN_ALLOW_THREADS
        pthread_join(p->tid, NULL);
        Py_END_ALLOW_THREADS
        p->running = 0;
    }
}

static void
pending_release(pending *p)
{
    Py_ssize_t i;
    pending_join(p);
    if (p->j.items != NULL) {
        for (i = 0; i < p->j.n; i++)
            item_free(&p->j.items[i]);
        PyMem_Free(p->j.items);
        p->j.items = NULL;
    }
    if (p->j.dfd >= 0) {
        close(p->j.dfd);
        p->j.dfd = -1;
    }
    Py_CLEAR(p->holders);
    Py_CLEAR(p->names);
}

static void
pending_destroy(PyObject *capsule)
{
    pending *p = PyCapsule_GetPointer(capsule, PENDING);
    if (p == NULL) {
        PyErr_Clear();
        return;
    }
    pending_release(p);
    PyMem_Free(p);
}

static PyObject *
read_start(PyObject *self, PyObject *args)
{
    int dfd;
    PyObject *names, *capsule;
    Py_ssize_t n;
    pending *p;

    if (!PyArg_ParseTuple(args, "iO!", &dfd, &PyList_Type, &names))
        return NULL;
    n = PyList_GET_SIZE(names);
    p = PyMem_Calloc(1, sizeof(pending));
    if (p == NULL)
        return PyErr_NoMemory();
    p->j.dfd = -1;
    capsule = PyCapsule_New(p, PENDING, pending_destroy);
    if (capsule == NULL) {
        PyMem_Free(p);
        return NULL;
    }
    p->j.items = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof(item));
    p->holders = PyList_New(n);
    if (p->j.items == NULL || p->holders == NULL) {
        Py_DECREF(capsule);
        return PyErr_NoMemory();
    }
    p->j.n = n;
    p->names = PyList_GetSlice(names, 0, n);  /* a copy: the caller may change its list */
    if (p->names == NULL) {
        Py_DECREF(capsule);
        return NULL;
    }
    if (encode_names(names, 0, n, p->j.items, p->holders) < 0) {
        p->j.n = 0;  /* no buffer was allocated yet */
        Py_DECREF(capsule);
        return NULL;
    }
    p->j.dfd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
    if (p->j.dfd < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        Py_DECREF(capsule);
        return NULL;
    }
    p->j.next = 0;
    p->j.mode = 0;
    if (n > 0 && pthread_create(&p->tid, NULL, worker, &p->j) == 0)
        p->running = 1;
    /* else read_finish runs the job itself */
    return capsule;
}

static PyObject *
read_finish(PyObject *self, PyObject *args)
{
    PyObject *capsule, *spec = Py_None, *out;
    pending *p;
    key_slot slots[KEY_SLOTS];
    int used = 0;
    Py_ssize_t i;
    builder bl, *blp = NULL;

    if (!PyArg_ParseTuple(args, "O|O", &capsule, &spec))
        return NULL;
    p = PyCapsule_GetPointer(capsule, PENDING);
    if (p == NULL)
        return NULL;
    if (spec != Py_None) {
        int making = builder_init(&bl, spec, p->names, 0);
        if (making < 0)
            return NULL;
        if (making)
            blp = &bl;
    }
    if (p->finished) {
        PyErr_SetString(PyExc_ValueError, "this batch was already finished");
        return NULL;
    }
    p->finished = 1;
    /* Whatever the batch's thread has not taken yet, this one reads too (the two share
     * the job's counter): the caller has nothing else to do until the batch is in. */
    if (p->j.n > 0) {
        Py_BEGIN_ALLOW_THREADS
        worker(&p->j);
        Py_END_ALLOW_THREADS
    }
    pending_join(p);
    out = PyList_New(p->j.n);
    for (i = 0; out != NULL && i < p->j.n; i++) {
        PyObject *r = result_of(&p->j.items[i], slots, &used, blp, i);
        if (r == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, r);
    }
    release_keys(slots, used);
    pending_release(p);
    return out;
}

static void
put_word(unsigned char *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    int i;
    for (i = 0; i < 8; i++)
        p[i] = (unsigned char)(u >> (8 * i));
}

static PyObject *
stat_packed(PyObject *self, PyObject *args)
{
    int dfd, threads = 2;
    PyObject *names, *out = NULL;
    Py_ssize_t total, from;
    item *items = NULL;
    unsigned char *p;

    if (!PyArg_ParseTuple(args, "iO!|i", &dfd, &PyList_Type, &names, &threads))
        return NULL;
    threads = clamp_threads(threads);
    total = PyList_GET_SIZE(names);
    out = PyBytes_FromStringAndSize(NULL, total * 32);
    items = PyMem_Calloc(CHUNK, sizeof(item));
    if (out == NULL || items == NULL)
        goto fail;
    p = (unsigned char *)PyBytes_AS_STRING(out);
    for (from = 0; from < total; from += CHUNK) {
        Py_ssize_t n = total - from < CHUNK ? total - from : CHUNK, i;
        PyObject *holders = run_chunk(dfd, names, from, n, items, 1, threads);
        if (holders == NULL)
            goto fail;
        Py_DECREF(holders);
        for (i = 0; i < n; i++) {
            item *it = &items[i];
            if (it->stage != 0 || (unsigned long long)it->st.st_ino > (unsigned long long)INT64_MAX) {
                PyMem_Free(items);
                Py_DECREF(out);
                Py_RETURN_NONE;
            }
            put_word(p, (int64_t)it->st.st_size);
            put_word(p + 8, (int64_t)it->st.st_mtim.tv_sec * 1000000000LL + it->st.st_mtim.tv_nsec);
            put_word(p + 16, (int64_t)it->st.st_ino);
            put_word(p + 24, (int64_t)it->st.st_ctim.tv_sec * 1000000000LL + it->st.st_ctim.tv_nsec);
            p += 32;
        }
    }
    PyMem_Free(items);
    return out;
fail:
    PyMem_Free(items);
    Py_XDECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Letter, field_slots, file_slots): core.letters' tables, for the letters made here."},
    {"read_headers", read_headers, METH_VARARGS,
     "read_headers(dir_fd, names, threads=2, where=None): open, fstat and read the header of each name."},
    {"read_start", read_start, METH_VARARGS,
     "read_start(dir_fd, names): start reading the headers of names on a thread of its own."},
    {"read_finish", read_finish, METH_VARARGS,
     "read_finish(batch, where=None): wait for a read_start batch; what read_headers would have returned."},
    {"stat_packed", stat_packed, METH_VARARGS,
     "stat_packed(dir_fd, names, threads=2): lstat each name; packed (size, mtime_ns, inode, ctime_ns)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scanio", "The scan's per-file system calls, in C, on several threads.", -1, methods,
};

PyMODINIT_FUNC
PyInit__scanio(void)
{
    PyObject *m;
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL)
        return NULL;
    m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "FIRST_READ", FIRST_READ) < 0 || PyModule_AddIntConstant(m, "MAX_HEADER", MAX_HEADER) < 0 ||
        PyModule_AddIntConstant(m, "MAX_LINE", MAX_LINE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
