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
 *   core.letters.build makes; everything else is left to build()). Then data is not the
 *   header's bytes but their BLAKE2b-128 digest (16 bytes, core.speed.cache.header_hash):
 *   all the header cache keeps of them.
 *
 * read_start(dir_fd, names) / read_finish(batch, where=None): read_headers in two halves,
 *   the reading done by a thread of its own in between (the scan reads ahead with these).
 *   read_finish(batch, where, packed=True) gives (results, hashes, stats): each letter made
 *   here is in results as itself (not in a tuple), and its header's digest and its
 *   (size, mtime_ns, inode, ctime_ns) are in the two bytes objects, 16 and 32 bytes a
 *   letter in the order of results (native 64-bit words: array('q')); a letter whose stat
 *   does not fit in 64 bits is given in its tuple as before.
 *
 * stat_packed(dir_fd, names, threads) lstats each name relative to dir_fd and returns
 *   (size, mtime_ns, inode, ctime_ns) of every one as little-endian signed 64-bit words, or
 *   None when any stat fails or a value does not fit (core.speed.memo compares these bytes).
 *
 * check_start(work, threads) / check_finish(handle): the memo's proof that every file stats
 *   as recorded, on threads of its own while the caller goes on (_scanio_check.c).
 *
 * In six files by concern: this one the system calls, the threads and the module;
 * _scanio_header.c the header's split into spans (no Python object); _scanio_letters.c
 * the Python objects made of one read, and the letters; _scanio_strings.c the strings
 * that repeat from letter to letter, made once; _scanio_digest.c the header's content
 * hash; _scanio_check.c the proof (shared: _scanio.h).
 *
 * The system calls run without the GIL, on up to `threads` threads, CHUNK files at a time
 * (so memory stays bounded whatever the folder's size). Letter bytes are hostile: every
 * index below is checked against the length read, and nothing is ever written past a buffer.
 */
#include "_scanio.h"

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
    /* The first read goes to the stack; the item keeps a copy of just what it needs
     * (a fresh 4 KiB block a file would cost the process a page fault a file). */
    r = read_some(fd, first, FIRST_READ);
    if (r < 0) {
        it->stage = 3;
        it->err = errno;
        close(fd);
        return;
    }
    it->len = r;
    more = r > 0 && r < READ_LIMIT && scanio_find_close(first, r, 3, 0, &endpos) < 0;
    if (!more) {
        /* The header is all in the first read: split and hash it there, and keep just what
         * the split needs (the header, not the body: a quarter of the bytes of a file) */
        Py_ssize_t keep;
        close(fd);
        it->buf = first;
        it->nf = scanio_parse_fast(it);
        if (it->nf >= 0) {
            scanio_digest(first, it->end, it->digest);
            it->len = it->end;
        }
        keep = it->len;
        it->buf = malloc(keep > 0 ? (size_t)keep : 1);
        if (it->buf == NULL) {
            free(it->f);
            it->f = NULL;
            it->nf = -1;
            it->stage = 3;
            it->err = ENOMEM;
            return;
        }
        memcpy(it->buf, first, (size_t)keep);
        return;
    }
    it->buf = malloc(READ_LIMIT);
    if (it->buf == NULL) {
        it->stage = 3;
        it->err = ENOMEM;
        close(fd);
        return;
    }
    memcpy(it->buf, first, (size_t)r);
    while (more && it->len < READ_LIMIT && scanio_find_close(it->buf, it->len, 3, 0, &endpos) < 0) {
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
    it->nf = scanio_parse_fast(it);
    if (it->nf >= 0)
        scanio_digest(it->buf, it->end, it->digest);
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
    int dfd, threads = 2;
    PyObject *names, *out = NULL, *spec = Py_None;
    Py_ssize_t total, from;
    item *items = NULL;
    builder bl, *blp = NULL;

    if (!PyArg_ParseTuple(args, "iO!|iO", &dfd, &PyList_Type, &names, &threads, &spec))
        return NULL;
    names = PyList_GetSlice(names, 0, PyList_GET_SIZE(names));  /* a copy, as read_start */
    if (names == NULL)
        return NULL;
    if (spec != Py_None) {
        int making = scanio_builder_init(&bl, spec, names, 0);
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
            PyObject *r = scanio_result_of(&items[i], blp, from + i);
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

/* Whether a stat's (size, mtime_ns, inode, ctime_ns) fit in signed 64-bit words. */
static int
packable(const struct stat *st)
{
    return st->st_mtim.tv_sec > -9000000000LL && st->st_mtim.tv_sec < 9000000000LL && st->st_ctim.tv_sec > -9000000000LL
           && st->st_ctim.tv_sec < 9000000000LL && (unsigned long long)st->st_ino <= (unsigned long long)INT64_MAX;
}

/* (size, mtime_ns, inode, ctime_ns) as native signed 64-bit words (array('q')'s). */
static void
put_stat(unsigned char *to, const struct stat *st)
{
    int64_t v[4];
    v[0] = (int64_t)st->st_size;
    v[1] = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
    v[2] = (int64_t)st->st_ino;
    v[3] = (int64_t)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
    memcpy(to, v, sizeof(v));
}

static PyObject *
read_finish(PyObject *self, PyObject *args)
{
    PyObject *capsule, *spec = Py_None, *out, *hashes = NULL, *stats = NULL;
    pending *p;
    Py_ssize_t i, made = 0;
    builder bl, *blp = NULL;
    int packed = 0;

    if (!PyArg_ParseTuple(args, "O|Op", &capsule, &spec, &packed))
        return NULL;
    p = PyCapsule_GetPointer(capsule, PENDING);
    if (p == NULL)
        return NULL;
    if (spec != Py_None) {
        int making = scanio_builder_init(&bl, spec, p->names, 0);
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
    packed = packed && blp != NULL;
    if (packed) {
        hashes = PyBytes_FromStringAndSize(NULL, p->j.n * SCANIO_DIGEST);
        stats = PyBytes_FromStringAndSize(NULL, p->j.n * 32);
        if (hashes == NULL || stats == NULL)
            Py_CLEAR(out);
    }
    for (i = 0; out != NULL && i < p->j.n; i++) {
        item *it = &p->j.items[i];
        PyObject *r = scanio_result_of(it, blp, i);
        if (r == NULL) {
            Py_CLEAR(out);
            break;
        }
        if (packed && scanio_is_made(PyTuple_GET_ITEM(r, 8)) && packable(&it->st)) {
            /* a letter made here: the letter itself; its hash and stat in the blobs */
            PyObject *letter = Py_NewRef(PyTuple_GET_ITEM(r, 8));
            memcpy(PyBytes_AS_STRING(hashes) + made * SCANIO_DIGEST, PyBytes_AS_STRING(PyTuple_GET_ITEM(r, 7)),
                   SCANIO_DIGEST);
            put_stat((unsigned char *)PyBytes_AS_STRING(stats) + made * 32, &it->st);
            made++;
            Py_DECREF(r);
            r = letter;
        }
        PyList_SET_ITEM(out, i, r);
    }
    pending_release(p);
    if (!packed || out == NULL) {
        Py_XDECREF(hashes);
        Py_XDECREF(stats);
        return out;
    }
    if (_PyBytes_Resize(&hashes, made * SCANIO_DIGEST) < 0 || _PyBytes_Resize(&stats, made * 32) < 0) {
        Py_XDECREF(hashes);
        Py_XDECREF(stats);
        Py_DECREF(out);
        return NULL;
    }
    return Py_BuildValue("(NNN)", out, hashes, stats);
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
    {"configure", scanio_configure, METH_VARARGS,
     "configure(Letter, field_slots, file_slots, values_in_slots=False): core.letters' tables, for the letters made here."},
    {"read_headers", read_headers, METH_VARARGS,
     "read_headers(dir_fd, names, threads=2, where=None): open, fstat and read the header of each name."},
    {"read_start", read_start, METH_VARARGS,
     "read_start(dir_fd, names): start reading the headers of names on a thread of its own."},
    {"read_finish", read_finish, METH_VARARGS,
     "read_finish(batch, where=None, packed=False): wait for a read_start batch; what read_headers would have "
     "returned (packed: (results, hashes, stats), a letter made here given as itself, its hash and stat in "
     "the two blobs)."},
    {"check_start", scanio_check_start, METH_VARARGS,
     "check_start(work, threads=2): start proving [(dir_fd, names, n, expected)] unchanged, on threads of its own."},
    {"check_finish", scanio_check_finish, METH_VARARGS,
     "check_finish(handle): wait for check_start's threads; True when every file stats as expected."},
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
    if (scanio_letters_init() < 0)
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
