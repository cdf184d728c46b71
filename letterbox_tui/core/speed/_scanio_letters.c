/* letterbox_tui.core.speed._scanio, the Python side of one read: its (key, value) pairs as
 * Python objects, and, for a header that plainly meets core.letters' field table, the
 * Letter core.letters.build would make (see below). Runs with the GIL held. */
#include "_scanio.h"
#include <datetime.h>
#include <structmember.h>

int
scanio_letters_init(void)
{
    PyDateTime_IMPORT;  /* per file: this one makes the datetimes */
    return PyDateTimeAPI == NULL ? -1 : 0;
}
/* ---------------------------------------------------------------------------------- */


/* ---------------------------------------------------------------------------------- */
/* Letters made here. core.letters.build is the definition, and core.letters' two tables
 * (FIELD_SLOTS, FILE_SLOTS) are read once by scanio_configure() (core.speed.accel does it at
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
    PyObject *type;                 /* Letter; NULL until scanio_configure(): then no letter is made here */
    int n;                          /* rows of the field table */
    char key[MAX_TABLE][MAX_KEY + 1];
    Py_ssize_t key_len[MAX_TABLE];
    int kind[MAX_TABLE];
    PyObject *slot[MAX_TABLE];      /* the member descriptor of each row's slot */
    PyObject *time_slot[MAX_TABLE]; /* and of its time's slot, or NULL */
    PyObject *role[N_ROLES];
    int values_in_slots;            /* a letter whose every key is the table's keeps no values apart */
} config;

static config cfg;

/* Whether `obj` is a letter made here (of the configured type). */
int
scanio_is_made(PyObject *obj)
{
    return cfg.type != NULL && (PyObject *)Py_TYPE(obj) == cfg.type;
}

/* The row of the field table whose key is s[:len], or -1 (for _scanio_strings.c). */
int
scanio_key_row(const char *s, Py_ssize_t len)
{
    int i;
    for (i = 0; i < cfg.n; i++) {
        if (cfg.key_len[i] == len && memcmp(cfg.key[i], s, (size_t)len) == 0)
            return i;
    }
    return -1;
}

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
    if (d != NULL && (!Py_IS_TYPE(d, &PyMemberDescr_Type) || ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX
                      || (((PyMemberDescrObject *)d)->d_member->flags & READONLY))) {
        PyErr_Format(PyExc_TypeError, "%R is not a slot", name);
        Py_CLEAR(d);
    }
    return d;
}

/* Store `value` in the slot `descr` of `obj` (a new object of the configured type): the
 * slot's place is its member descriptor's offset, checked by slot_descriptor to be an
 * object slot of that type (what the descriptor's own setter does, without its checks). */
static inline void
put_slot(PyObject *obj, PyObject *descr, PyObject *value)
{
    PyObject **at = (PyObject **)((char *)obj + ((PyMemberDescrObject *)descr)->d_member->offset);
    PyObject *old = *at;
    *at = Py_NewRef(value);
    Py_XDECREF(old);
}

/* scanio_configure(Letter, field_slots, file_slots, values_in_slots=False): the tables of
 * core.letters. Every slot of Letter must be named exactly once; else ValueError, and no
 * letter is made here. values_in_slots: the letter type reads a header's values back from
 * its slots (Letter.field_values, by core.letters' table), so a letter whose every key is
 * the table's need not keep them apart (its _field_values is None). */
PyObject *
scanio_configure(PyObject *self, PyObject *args)
{
    PyObject *type, *fields, *files, *seen = NULL, *all = NULL;
    config c;
    Py_ssize_t i;
    int k, values_in_slots = 0;

    memset(&c, 0, sizeof(c));
    config_clear(&cfg);  /* a failed configure leaves none */
    scanio_shared_clear();
    if (!PyArg_ParseTuple(args, "O!O!O!|p", &PyType_Type, &type, &PyTuple_Type, &fields, &PyTuple_Type, &files,
                          &values_in_slots))
        return NULL;
    c.values_in_slots = values_in_slots;
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
    scanio_shared_clear();  /* the names' rows are this table's */
    for (i = 0; i < cfg.n; i++) {  /* the table's names are kept first */
        int known;
        PyObject *o = scanio_key_object(cfg.key[i], cfg.key_len[i], &known, -1);
        if (o == NULL)
            return NULL;
        Py_DECREF(o);
    }
    Py_RETURN_NONE;
fail:
    Py_XDECREF(seen);
    config_clear(&c);
    return NULL;
}

/* spec: (seat, folder, path prefix); 1 when letters are to be made (scanio_configure() was
 * called), 0 when not, -1 with an exception set. A letter made with the prefix
 * "seat/folder/" keeps no path (Letter.path is its seat, folder and name joined). */
int
scanio_builder_init(builder *b, PyObject *spec, PyObject *names, Py_ssize_t from)
{
    memset(b, 0, sizeof(*b));
    PyObject *joined;
    if (!PyArg_ParseTuple(spec, "UUU", &b->seat, &b->folder, &b->prefix))
        return -1;
    b->names = names;
    b->from = from;
    joined = PyUnicode_FromFormat("%U/%U/", b->seat, b->folder);
    if (joined == NULL)
        return -1;
    b->joined = PyUnicode_Compare(joined, b->prefix) == 0;
    Py_DECREF(joined);
    if (PyErr_Occurred())
        return -1;
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

/* The Letter build() would make; NULL with an exception set. Steals nothing. `vals`:
 * each field's value; `values`: what the letter keeps of them (None: each is in its slot,
 * as every name is the table's, ``Letter.fields`` reads them back from there). */
static PyObject *
make_letter(builder *bl, PyObject *name, const int *pos, PyObject *keys, PyObject *const *vals, PyObject *values,
            int times[][6], const int *has_time, PyObject *size, PyObject *mtime, PyObject *inode)
{
    PyObject *v[N_ROLES] = {NULL};
    PyObject *letter = NULL, *empty = PyUnicode_New(0, 0), *none_tuple = PyTuple_New(0);
    int k, ok = 0;

    if (empty == NULL || none_tuple == NULL)
        goto done;
    v[R_FIELDS] = Py_NewRef(Py_None);
    v[R_KEYS] = Py_NewRef(keys);
    v[R_VALUES] = Py_NewRef(values);
    v[R_SEAT] = Py_NewRef(bl->seat);
    v[R_FOLDER] = Py_NewRef(bl->folder);
    /* None: Letter.path joins seat, folder and name when asked (the path is not kept) */
    v[R_PATH] = bl->joined ? Py_NewRef(Py_None) : PyUnicode_Concat(bl->prefix, name);
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
    for (k = 0; k < N_ROLES; k++)
        put_slot(letter, cfg.role[k], v[k]);
    for (k = 0; k < cfg.n; k++) {
        PyObject *value = cfg.kind[k] == KIND_LIST ? none_tuple : (pos[k] >= 0 ? vals[pos[k]] : empty);
        put_slot(letter, cfg.slot[k], value);
        if (cfg.time_slot[k] != NULL) {
            PyObject *when = has_time[k] ? utc_datetime(times[k]) : Py_NewRef(Py_None);
            if (when == NULL)
                goto done;
            put_slot(letter, cfg.time_slot[k], when);
            Py_DECREF(when);
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

/* A file time in nanoseconds, exactly as os.stat's st_*_ns gives it (Python ints past
 * 64 bits: a time set beyond the year 2262 must not wrap). */
static PyObject *
ns_object(const struct timespec *t)
{
    PyObject *sec, *big, *scaled, *out;
    if (t->tv_sec > -9000000000LL && t->tv_sec < 9000000000LL)
        return PyLong_FromLongLong((long long)t->tv_sec * 1000000000LL + t->tv_nsec);
    sec = PyLong_FromLongLong((long long)t->tv_sec);
    big = PyLong_FromLong(1000000000L);
    scaled = sec != NULL && big != NULL ? PyNumber_Multiply(sec, big) : NULL;
    Py_XDECREF(sec);
    Py_XDECREF(big);
    if (scaled == NULL)
        return NULL;
    sec = PyLong_FromLong((long)t->tv_nsec);
    out = sec != NULL ? PyNumber_Add(scaled, sec) : NULL;
    Py_XDECREF(sec);
    Py_DECREF(scaled);
    return out;
}

/* The int of a file's mode: files of one folder nearly always share one (kept). */
static PyObject *
mode_object(mode_t mode)
{
    static PyObject *last;
    static mode_t last_mode;
    if (last == NULL || last_mode != mode) {
        PyObject *o = PyLong_FromLong((long)mode);
        if (o == NULL)
            return NULL;
        Py_XSETREF(last, o);
        last_mode = mode;
    }
    return Py_NewRef(last);
}

/* One item's result: (stage, errno, mode, size, mtime_ns, inode, ctime_ns, data, fields),
 * where with a builder `fields` may be the Letter itself (see above). */
PyObject *
scanio_result_of(item *it, builder *bl, Py_ssize_t index)
{
    PyObject *out = NULL, *data = NULL, *fields = NULL, *keys = NULL, *values = NULL;
    PyObject *mode = NULL, *size = NULL, *mtime = NULL, *inode = NULL, *ctime = NULL;
    PyObject *key_of[MAX_FIELDS], *val_of[MAX_FIELDS];
    int k, got = 0;

    if (it->stage != 0) {
        Py_INCREF(Py_None);
        Py_INCREF(Py_None);
        return Py_BuildValue("(iiiLLKLNN)", it->stage, it->err, 0, (long long)0, (long long)0,
                             (unsigned long long)0, (long long)0, Py_None, Py_None);
    }
    mode = mode_object(it->st.st_mode);
    size = PyLong_FromLongLong((long long)it->st.st_size);
    mtime = ns_object(&it->st.st_mtim);
    inode = PyLong_FromUnsignedLongLong((unsigned long long)it->st.st_ino);
    ctime = ns_object(&it->st.st_ctim);
    if (mode == NULL || size == NULL || mtime == NULL || inode == NULL || ctime == NULL)
        goto fail;
    if (it->buf == NULL) {  /* not a regular file: not read */
        data = Py_None;
        Py_INCREF(data);
        fields = Py_None;
        Py_INCREF(fields);
    }
    else if (it->nf >= 0) {
        int pos[MAX_TABLE], all_kept = 1, all_known = 1, times[MAX_TABLE][6], has_time[MAX_TABLE];
        for (k = 0; k < MAX_TABLE; k++)
            pos[k] = -1;
        for (k = 0; k < it->nf; k++, got++) {
            span *f = &it->f[k];
            int known, kind;
            key_of[k] = scanio_key_object(it->buf + f->ks, f->kl, &known, k);
            if (key_of[k] == NULL)
                goto fail;
            kind = known >= 0 ? cfg.kind[known] : -1;
            val_of[k] = scanio_value_object(it->buf + f->vs, f->vl,
                                           kind == KIND_POINTER ? 2 : kind != KIND_ID && kind != KIND_TIME && kind != KIND_SENT);
            if (val_of[k] == NULL) {
                Py_DECREF(key_of[k]);
                goto fail;
            }
            if (known >= 0)
                pos[known] = k;  /* the fast path admits no repeated key */
            else {
                all_known = 0;
                all_kept = all_kept && known == -1;
            }
        }
        if (bl != NULL && all_kept && canonical(it, pos, times, has_time)) {
            PyObject *name = PyList_GET_ITEM(bl->names, bl->from + index);
            keys = scanio_keys_tuple(key_of, it->nf, 1);
            if (keys == NULL)
                goto fail;
            if (all_known && cfg.values_in_slots)
                values = Py_NewRef(Py_None);
            else {
                values = PyTuple_New(it->nf);
                if (values == NULL)
                    goto fail;
                for (k = 0; k < it->nf; k++)
                    PyTuple_SET_ITEM(values, k, Py_NewRef(val_of[k]));
            }
            fields = make_letter(bl, name, pos, keys, val_of, values, times, has_time, size, mtime, inode);
            if (fields == NULL)
                goto fail;
            /* the letter is made: what the cache keeps of its header is its hash */
            data = PyBytes_FromStringAndSize((const char *)it->digest, SCANIO_DIGEST);
            if (data == NULL)
                goto fail;
        }
        else {
            data = PyBytes_FromStringAndSize(it->buf, it->end);
            if (data == NULL)
                goto fail;
            fields = PyTuple_New(it->nf);
            if (fields == NULL)
                goto fail;
            for (k = 0; k < it->nf; k++) {
                PyObject *pair = PyTuple_Pack(2, key_of[k], val_of[k]);
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
    for (k = 0; k < got; k++) {
        Py_DECREF(key_of[k]);
        Py_DECREF(val_of[k]);
    }
    return out;
fail:
    for (k = 0; k < got; k++) {
        Py_DECREF(key_of[k]);
        Py_DECREF(val_of[k]);
    }
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
