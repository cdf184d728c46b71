/* letterbox_tui.core.speed._scanio: the answer memo's and the derived index's proof that
 * every letter file stats as recorded, on threads of its own while the caller goes on.
 *
 * check_start(work, threads) starts the proof and returns at once; work is a list of
 *   (dir_fd, names, n, expected): the n names of one folder as file-system bytes, each
 *   ended by a NUL (for a bytes object the last one may end without: CPython keeps a NUL
 *   after every bytes object), and expected their packed (size, mtime_ns, inode, ctime_ns)
 *   records as stat_packed writes them (n * 32 bytes); any buffer (a memoryview of a file
 *   read whole) will do for either, held until the proof is finished or dropped. The threads lstat
 *   every name relative to its folder (on a duplicate of dir_fd, so the caller closing its
 *   descriptor early never points a thread at another file) and compare the record.
 * check_finish(handle) waits for them and returns True when every file stats exactly as
 *   expected, False when one does not, cannot be stat-ed or a value does not fit; then
 *   the threads stop early. A handle dropped unfinished is stopped, waited for and freed
 *   by its capsule's destructor.
 *
 * Nothing is made per file on the Python side (no name string, no tuple): at 100,000
 * files encoding the names alone was a tenth of the proof. The names are taken as they
 * are: no name holds a NUL or a slash (a name with a slash would be stat-ed through a
 * folder: the caller records only plain names, core.speed.memo.recordable).
 */
#include "_scanio.h"

#define CHECK "letterbox_tui.core.speed._scanio.check"
#define CHECK_GRAB 16

typedef struct {
    const char *name;
    const unsigned char *expected;
    int fd;
} check_file;

typedef struct {
    int fd;                   /* a duplicate of the caller's dir_fd */
    const char *names;        /* inside the buffer held in `nb` */
    Py_ssize_t len, n;        /* len: up to the NUL that ends the last name */
    const unsigned char *expected;
    Py_buffer nb, eb;         /* the names' and the records' buffers, held until released */
    int held;                 /* how many of the two are held */
} check_folder;

typedef struct {
    check_folder *folders;
    Py_ssize_t nfolders;
    check_file *files;
    Py_ssize_t nfiles;
    Py_ssize_t next;     /* shared work counter */
    int bad;             /* set once: a file differs (the others stop) */
    int threads;
    pthread_t lead;
    int running;         /* the lead thread is (or was) running, not yet joined */
    int finished;        /* check_finish took the verdict */
    PyObject *keep;      /* the work list's bytes, alive while the threads read them */
} check;

static void
put64(unsigned char *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    int i;
    for (i = 0; i < 8; i++)
        p[i] = (unsigned char)(u >> (8 * i));
}

static void *
check_worker(void *arg)
{
    check *c = arg;
    struct stat st;
    unsigned char rec[32];
    for (;;) {
        Py_ssize_t i, k;
        if (__atomic_load_n(&c->bad, __ATOMIC_RELAXED))
            break;
        i = __atomic_fetch_add(&c->next, CHECK_GRAB, __ATOMIC_RELAXED);
        if (i >= c->nfiles)
            break;
        for (k = i; k < i + CHECK_GRAB && k < c->nfiles; k++) {
            check_file *f = &c->files[k];
            if (fstatat(f->fd, f->name, &st, AT_SYMLINK_NOFOLLOW) != 0
                || (unsigned long long)st.st_ino > (unsigned long long)INT64_MAX) {
                __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
                break;
            }
            put64(rec, (int64_t)st.st_size);
            put64(rec + 8, (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
            put64(rec + 16, (int64_t)st.st_ino);
            put64(rec + 24, (int64_t)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec);
            if (memcmp(rec, f->expected, 32) != 0) {
                __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
                break;
            }
        }
    }
    return NULL;
}

/* The lead thread: the table of files (one pass over the names), then the other
 * threads, then its own share of the work. */
static void *
check_lead(void *arg)
{
    check *c = arg;
    pthread_t tids[MAX_THREADS];
    Py_ssize_t f, at = 0;
    int started = 0, t;

    for (f = 0; f < c->nfolders; f++) {
        check_folder *d = &c->folders[f];
        const char *p = d->names, *end = d->names + d->len;
        Py_ssize_t i;
        for (i = 0; i < d->n; i++) {
            const char *stop = memchr(p, '\0', (size_t)(end - p) + 1);  /* the final NUL counts */
            if (stop == NULL || stop == p || (i + 1 < d->n) != (stop < end)) {
                __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);  /* not n names: vouch for nothing */
                return NULL;
            }
            c->files[at].name = p;
            c->files[at].expected = d->expected + 32 * i;
            c->files[at].fd = d->fd;
            at++;
            p = stop + 1;
        }
        if (d->n == 0 && d->len != 0) {
            __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
            return NULL;
        }
    }
    for (t = 1; t < c->threads && c->nfiles > CHECK_GRAB * t; t++) {
        if (pthread_create(&tids[started], NULL, check_worker, c) != 0)
            break;
        started++;
    }
    check_worker(c);
    for (t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    return NULL;
}

static void
check_join(check *c)
{
    if (c->running) {
        Py_BEGIN_ALLOW_THREADS
        pthread_join(c->lead, NULL);
        Py_END_ALLOW_THREADS
        c->running = 0;
    }
}

static void
check_release(check *c)
{
    Py_ssize_t f;
    check_join(c);
    for (f = 0; c->folders != NULL && f < c->nfolders; f++) {
        check_folder *d = &c->folders[f];
        if (d->fd >= 0)
            close(d->fd);
        if (d->held > 0)
            PyBuffer_Release(&d->nb);
        if (d->held > 1)
            PyBuffer_Release(&d->eb);
        d->held = 0;
    }
    PyMem_Free(c->folders);
    PyMem_Free(c->files);
    c->folders = NULL;
    c->files = NULL;
    Py_CLEAR(c->keep);
}

static void
check_destroy(PyObject *capsule)
{
    check *c = PyCapsule_GetPointer(capsule, CHECK);
    if (c == NULL) {
        PyErr_Clear();
        return;
    }
    __atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);  /* nobody waits for the verdict: stop early */
    check_release(c);
    PyMem_Free(c);
}

PyObject *
scanio_check_start(PyObject *self, PyObject *args)
{
    PyObject *work, *capsule;
    int threads = 2;
    Py_ssize_t nf, f, total = 0;
    check *c;

    if (!PyArg_ParseTuple(args, "O!|i", &PyList_Type, &work, &threads))
        return NULL;
    threads = threads < 1 ? 1 : (threads > MAX_THREADS ? MAX_THREADS : threads);
    c = PyMem_Calloc(1, sizeof(check));
    if (c == NULL)
        return PyErr_NoMemory();
    capsule = PyCapsule_New(c, CHECK, check_destroy);
    if (capsule == NULL) {
        PyMem_Free(c);
        return NULL;
    }
    c->threads = threads;
    c->keep = PyList_GetSlice(work, 0, PyList_GET_SIZE(work));  /* a copy: the caller may change its list */
    if (c->keep == NULL) {
        Py_DECREF(capsule);
        return NULL;
    }
    nf = PyList_GET_SIZE(c->keep);
    c->folders = PyMem_Calloc(nf > 0 ? (size_t)nf : 1, sizeof(check_folder));
    if (c->folders == NULL) {
        Py_DECREF(capsule);
        return PyErr_NoMemory();
    }
    for (f = 0; f < nf; f++)
        c->folders[f].fd = -1;
    for (f = 0; f < nf; f++) {
        PyObject *entry = PyList_GET_ITEM(c->keep, f), *names, *expected;
        int dfd;
        Py_ssize_t n;
        check_folder *d = &c->folders[f];
        c->nfolders = f + 1;
        if (!PyTuple_Check(entry) || !PyArg_ParseTuple(entry, "iOnO", &dfd, &names, &n, &expected)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "each item is (dir_fd, names, n, expected)");
            Py_DECREF(capsule);
            return NULL;
        }
        if (PyUnicode_Check(names) || PyUnicode_Check(expected)) {
            PyErr_SetString(PyExc_TypeError, "names and expected are bytes, not str");
            Py_DECREF(capsule);
            return NULL;
        }
        if (PyObject_GetBuffer(names, &d->nb, PyBUF_SIMPLE) < 0) {
            Py_DECREF(capsule);
            return NULL;
        }
        d->held = 1;
        if (PyObject_GetBuffer(expected, &d->eb, PyBUF_SIMPLE) < 0) {
            Py_DECREF(capsule);
            return NULL;
        }
        d->held = 2;
        if (n < 0 || d->eb.len != 32 * n) {
            PyErr_SetString(PyExc_ValueError, "expected holds 32 bytes per name");
            Py_DECREF(capsule);
            return NULL;
        }
        d->names = d->nb.buf;
        d->len = d->nb.len;
        /* the last name is ended by a NUL: the buffer's own last byte, or the one CPython
         * keeps after every bytes object */
        if (d->len > 0 && d->names[d->len - 1] == '\0')
            d->len -= 1;
        else if (!PyBytes_CheckExact(names) && d->len > 0) {
            PyErr_SetString(PyExc_ValueError, "names not ended by a NUL");
            Py_DECREF(capsule);
            return NULL;
        }
        d->fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
        if (d->fd < 0) {
            PyErr_SetFromErrno(PyExc_OSError);
            Py_DECREF(capsule);
            return NULL;
        }
        d->n = n;
        d->expected = (const unsigned char *)d->eb.buf;
        total += n;
    }
    c->nfiles = total;
    c->files = PyMem_Malloc((total > 0 ? (size_t)total : 1) * sizeof(check_file));
    if (c->files == NULL) {
        Py_DECREF(capsule);
        return PyErr_NoMemory();
    }
    if (pthread_create(&c->lead, NULL, check_lead, c) == 0)
        c->running = 1;
    /* else check_finish runs the lead's work itself */
    return capsule;
}

PyObject *
scanio_check_finish(PyObject *self, PyObject *args)
{
    PyObject *capsule;
    check *c;
    int bad;

    if (!PyArg_ParseTuple(args, "O", &capsule))
        return NULL;
    c = PyCapsule_GetPointer(capsule, CHECK);
    if (c == NULL)
        return NULL;
    if (c->finished) {
        PyErr_SetString(PyExc_ValueError, "this check was already finished");
        return NULL;
    }
    c->finished = 1;
    if (!c->running) {
        Py_BEGIN_ALLOW_THREADS
        check_lead(c);
        Py_END_ALLOW_THREADS
    }
    check_join(c);
    bad = __atomic_load_n(&c->bad, __ATOMIC_RELAXED);
    check_release(c);
    return PyBool_FromLong(!bad);
}
