/* _gi_ds.c: the native half of the Ds PyGObject override (gi.overrides._gi_ds)
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the override (Ds.py) cannot do fast, or at all, in Python:
 *
 * - Export: one export of a block (ds_block_export()) held as a C
 *   reference, with a note of what holds it and where it was made, so that
 *   a BufferError can name what is still alive;
 * - DLPack: Block.__dlpack__ and View.__dlpack__ make the capsule in C. Its
 *   tensor holds its own export and its deleter needs no Python, so a
 *   consumer may call it from any thread;
 * - the live exports and tensors of one scratchpad, for those messages.
 *
 * A Ds.Block's C pointer is its hash: PyGObject's GBoxed hashes as the
 * boxed pointer (gboxed_hash in pygboxed.c); setup() checks that Ds.Block
 * keeps that hash.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <ds.h>
#include <stdint.h>

/* What Ds.py must be written for: bumped with any change of this module's
 * functions; Ds.py refuses to load with another. */
#define GI_DS_OVERRIDE_API 2

/* --- DLPack (dlpack.h, the unversioned ABI every consumer reads) -------- */

enum
{
  DL_CPU = 1,
  DL_CUDA = 2,
  DL_CUDA_HOST = 3,
  DL_CUDA_MANAGED = 13,
};

typedef struct
{
  int32_t device_type;
  int32_t device_id;
} DLDevice;

typedef struct
{
  uint8_t  code;
  uint8_t  bits;
  uint16_t lanes;
} DLDataType;

typedef struct
{
  void       *data;
  DLDevice    device;
  int32_t     ndim;
  DLDataType  dtype;
  int64_t    *shape;
  int64_t    *strides;
  uint64_t    byte_offset;
} DLTensor;

typedef struct DLManagedTensor DLManagedTensor;
struct DLManagedTensor
{
  DLTensor  dl_tensor;
  void     *manager_ctx;
  void    (*deleter) (DLManagedTensor *self);
};

/* --- module state ---------------------------------------------------------- */

static PyTypeObject *block_type;      /* Ds.Block (the override's class) */
static PyObject     *error_factory;   /* (domain, code, message) -> GLib.Error */

static PyObject *
raise_gerror (GError *error)
{
  PyObject *exc;

  exc = PyObject_CallFunction (error_factory, "Iis", (unsigned) error->domain,
                               error->code, error->message);
  g_error_free (error);
  if (exc != NULL)
    {
      PyErr_SetObject ((PyObject *) Py_TYPE (exc), exc);
      Py_DECREF (exc);
    }
  return NULL;
}

static DsBlock *
block_pointer (PyObject *block)
{
  Py_hash_t hash;

  if (block_type == NULL || !PyObject_TypeCheck (block, block_type))
    {
      PyErr_Format (PyExc_TypeError, "a Ds.Block is required, not %.200s",
                    Py_TYPE (block)->tp_name);
      return NULL;
    }
  hash = PyObject_Hash (block);
  if (hash == -1)
    return NULL;
  return (DsBlock *) (uintptr_t) hash;
}

static int
scratchpad_device (DsBlock *block)
{
  const DsAccessOrder *order = ds_scratchpad_get_device_order (ds_block_get_scratchpad (block));

  return MAX (ds_access_order_get_device (order), 0);
}

/* --- Export ------------------------------------------------------------------ */

typedef struct _Export Export;
struct _Export
{
  PyObject_HEAD
  DsBlock  *block;      /* an export: counted by the scratchpad */
  gpointer  ptr;        /* its memory (valid while the export lives) */
  PyObject *what;       /* what holds it (str), or None */
  PyObject *where;      /* where it was made ("file:line"), or None */
  PyObject *code;       /* else the code that made it (or NULL), */
  int       lasti;      /* at this instruction: the line is found when asked */
  Export   *prev;
  Export   *next;
};

/* Every live Export, under the GIL. */
static Export *live_exports;

static PyTypeObject Export_Type;

static Export *
export_new (DsBlock *source)
{
  GError *error = NULL;
  DsBlock *block = ds_block_export (source, &error);
  Export *self;

  if (block == NULL)
    return (Export *) raise_gerror (error);

  self = PyObject_New (Export, &Export_Type);
  if (self == NULL)
    {
      ds_block_unref (block);
      return NULL;
    }
  self->block = block;
  self->ptr = ds_block_get_pointer (block);
  self->what = Py_NewRef (Py_None);
  self->where = Py_NewRef (Py_None);
  self->code = NULL;
  self->lasti = 0;
  self->prev = NULL;
  self->next = live_exports;
  if (live_exports != NULL)
    live_exports->prev = self;
  live_exports = self;
  return self;
}

/* Notes the Python code running now as where @self was made (its line
 * is found only when asked). */
static void
export_note_where (Export *self)
{
  PyFrameObject *frame = PyEval_GetFrame ();

  if (frame != NULL)
    {
      Py_XSETREF (self->code, (PyObject *) PyFrame_GetCode (frame));
      self->lasti = PyFrame_GetLasti (frame);
    }
}

static PyObject *
Export_tp_new (PyTypeObject  *type,
               PyObject      *args,
               PyObject      *kwargs)
{
  static char *names[] = { "block", "what", "where", NULL };
  PyObject *block, *what = Py_None, *where = Py_None;
  DsBlock *pointer;
  Export *self;

  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O|OO:Export", names, &block, &what, &where))
    return NULL;
  /* Another export: one more export of the memory it keeps, past a
   * release too. */
  if (PyObject_TypeCheck (block, &Export_Type))
    pointer = ((Export *) block)->block;
  else if ((pointer = block_pointer (block)) == NULL)
    return NULL;
  if ((self = export_new (pointer)) == NULL)
    return NULL;
  Py_SETREF (self->what, Py_NewRef (what));
  Py_SETREF (self->where, Py_NewRef (where));
  return (PyObject *) self;
}

static void
Export_dealloc (Export *self)
{
  if (self->prev != NULL)
    self->prev->next = self->next;
  else
    live_exports = self->next;
  if (self->next != NULL)
    self->next->prev = self->prev;
  Py_CLEAR (self->what);
  Py_CLEAR (self->where);
  Py_CLEAR (self->code);
  /* May finalize the scratchpad, whose resources may be Python code. */
  ds_block_unref (self->block);
  PyObject_Free (self);
}

static PyObject *
Export_get_address (Export *self,
                    void   *closure)
{
  return PyLong_FromUnsignedLongLong ((guintptr) self->ptr);
}

static PyObject *
Export_get_where (Export *self,
                  void   *closure)
{
  if (self->where == Py_None && self->code != NULL)
    return PyUnicode_FromFormat ("%U:%d", ((PyCodeObject *) self->code)->co_filename,
                                 PyCode_Addr2Line ((PyCodeObject *) self->code, self->lasti));
  return Py_NewRef (self->where);
}

static int
Export_set_where (Export   *self,
                  PyObject *value,
                  void     *closure)
{
  if (value == NULL)
    value = Py_None;
  Py_SETREF (self->where, Py_NewRef (value));
  return 0;
}

/* The buffer protocol: the export's bytes, writable (host-visible kinds;
 * the override makes no export of device memory for the CPU). */
static int
Export_getbuffer (Export    *self,
                  Py_buffer *view,
                  int        flags)
{
  static char empty[1];

  if (ds_block_get_kind (self->block) == DS_MEMORY_KIND_DEVICE)
    {
      PyErr_SetString (PyExc_BufferError, "device memory is not addressable by the CPU");
      return -1;
    }
  return PyBuffer_FillInfo (view, (PyObject *) self, self->ptr != NULL ? self->ptr : empty,
                            (Py_ssize_t) ds_block_get_size (self->block), 0, flags);
}

static PyBufferProcs Export_as_buffer = {
  .bf_getbuffer = (getbufferproc) Export_getbuffer,
};

static PyObject *
Export_get_size (Export *self,
                 void   *closure)
{
  return PyLong_FromSize_t (ds_block_get_size (self->block));
}

static PyObject *
Export_get_kind (Export *self,
                 void   *closure)
{
  return PyLong_FromLong (ds_block_get_kind (self->block));
}

static PyObject *
Export_get_scratchpad (Export *self,
                       void   *closure)
{
  return PyLong_FromVoidPtr (ds_block_get_scratchpad (self->block));
}

static PyGetSetDef Export_getset[] = {
  { "address", (getter) Export_get_address, NULL, "the address of the memory", NULL },
  { "size", (getter) Export_get_size, NULL, "the size in bytes", NULL },
  { "kind", (getter) Export_get_kind, NULL, "the memory kind (an int)", NULL },
  { "scratchpad", (getter) Export_get_scratchpad, NULL,
    "the C pointer of the scratchpad (hash() of its Python object)", NULL },
  { "where", (getter) Export_get_where, (setter) Export_set_where,
    "where the export was made (\"file:line\"), or None", NULL },
  { NULL, NULL, NULL, NULL, NULL },
};

static PyMemberDef Export_members[] = {
  { "what", T_OBJECT, offsetof (Export, what), 0, "what holds the export" },
  { NULL, 0, 0, 0, NULL },
};

static PyTypeObject Export_Type = {
  PyVarObject_HEAD_INIT (NULL, 0)
  .tp_name = "gi.overrides._gi_ds.Export",
  .tp_doc = PyDoc_STR ("Export(block, what=None, where=None): an export of a Ds.Block\n"
                       "(or of the memory another Export keeps).\n\n"
                       "While it lives, the block's scratchpad is not released and not\n"
                       "finalized (see Ds.Block.export in the C API)."),
  .tp_basicsize = sizeof (Export),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_new = Export_tp_new,
  .tp_dealloc = (destructor) Export_dealloc,
  .tp_getset = Export_getset,
  .tp_members = Export_members,
  .tp_as_buffer = &Export_as_buffer,
};

/* --- DLPack tensors ---------------------------------------------------------- */

typedef struct _Tensor Tensor;
struct _Tensor
{
  DLManagedTensor  managed;     /* first: the deleter gets a pointer to it */
  DsBlock         *block;       /* an export */
  Tensor          *prev;
  Tensor          *next;
  const char      *file;        /* interned: where the Python code that made it is */
  int              line;
  const char      *what;        /* static: what it was made for, or NULL */
  int64_t          shape[];
};

/* Every live tensor; a consumer may delete one on any thread. */
static GMutex  tensors_lock;
static Tensor *live_tensors;

static void
tensor_delete (DLManagedTensor *managed)
{
  Tensor *self = (Tensor *) managed;

  g_mutex_lock (&tensors_lock);
  if (self->prev != NULL)
    self->prev->next = self->next;
  else
    live_tensors = self->next;
  if (self->next != NULL)
    self->next->prev = self->prev;
  g_mutex_unlock (&tensors_lock);

  ds_block_unref (self->block);
  g_free (self);
}

static void
capsule_destructor (PyObject *capsule)
{
  /* Still named "dltensor": never consumed, so the tensor is still ours
   * to delete. A consumer renames it "used_dltensor" and calls the
   * deleter itself. */
  if (PyCapsule_IsValid (capsule, "dltensor"))
    {
      PyObject *type, *value, *traceback;
      DLManagedTensor *managed;

      PyErr_Fetch (&type, &value, &traceback);
      managed = PyCapsule_GetPointer (capsule, "dltensor");
      if (managed != NULL)
        managed->deleter (managed);
      PyErr_Restore (type, value, traceback);
    }
}

/* The DLPack device of memory of @kind on @device unless the consumer asks
 * for another it may have: pinned memory is host memory (NumPy, PyTorch
 * take kDLCPU; neither takes kDLCUDAHost), managed memory GPU memory
 * (PyTorch and CuPy take kDLCUDA; PyTorch refuses kDLCUDAManaged). */
static void
default_device (int  kind,
                int  device,
                int *type,
                int *id)
{
  switch (kind)
    {
    case DS_MEMORY_KIND_DEVICE:
    case DS_MEMORY_KIND_MANAGED:
      *type = DL_CUDA;
      *id = device;
      break;
    default:
      *type = DL_CPU;
      *id = 0;
      break;
    }
}

static gboolean
device_allowed (int kind,
                int device,
                int type,
                int id)
{
  switch (kind)
    {
    case DS_MEMORY_KIND_HOST:
      return type == DL_CPU && id == 0;
    case DS_MEMORY_KIND_PINNED:
      return (type == DL_CPU && id == 0) || (type == DL_CUDA_HOST && id == 0) ||
             (type == DL_CUDA && id == device);
    case DS_MEMORY_KIND_DEVICE:
      return type == DL_CUDA && id == device;
    case DS_MEMORY_KIND_MANAGED:
      return (type == DL_CPU && id == 0) || (type == DL_CUDA && id == device) ||
             (type == DL_CUDA_MANAGED && id == device);
    default:
      return FALSE;
    }
}

static PyObject *
device_tuple (int kind,
              int device)
{
  int type, id;

  default_device (kind, device, &type, &id);
  return Py_BuildValue ("(ii)", type, id);
}

/* Orders the consumer after the scratchpad's work: the host waits for a
 * CPU consumer of pinned or managed memory; a GPU consumer's stream waits
 * for the scratchpad's device order. */
static gboolean
order_consumer (DsBlock  *block,
                int       type,
                PyObject *stream)
{
  const DsAccessOrder *producer = ds_scratchpad_get_device_order (ds_block_get_scratchpad (block));
  DsMemoryKind kind = ds_block_get_kind (block);
  GError *error = NULL;
  gboolean ok = TRUE;

  if (type == DL_CPU)
    {
      if (stream != Py_None && !(PyLong_Check (stream) && PyLong_AsLong (stream) == -1))
        {
          PyErr_Format (PyExc_BufferError,
                        "stream must be None for memory on the CPU, not %R", stream);
          return FALSE;
        }
      if (kind == DS_MEMORY_KIND_HOST || !ds_access_order_is_device (producer))
        return TRUE;
      Py_BEGIN_ALLOW_THREADS
      ok = ds_access_order_synchronize (producer, &error);
      Py_END_ALLOW_THREADS
    }
  else
    {
      unsigned long long handle = 0;
      DsAccessOrder *consumer;

      if (stream != Py_None)
        {
          if (!PyLong_Check (stream))
            {
              PyErr_Format (PyExc_TypeError, "stream must be None or an int, not %.200s",
                            Py_TYPE (stream)->tp_name);
              return FALSE;
            }
          if (PyLong_AsLong (stream) == -1 && !PyErr_Occurred ())
            return TRUE;    /* the consumer orders its work itself */
          PyErr_Clear ();
          handle = PyLong_AsUnsignedLongLong (stream);
          if (handle == (unsigned long long) -1 && PyErr_Occurred ())
            {
              PyErr_Clear ();
              PyErr_Format (PyExc_BufferError, "%R is not a CUDA stream", stream);
              return FALSE;
            }
          if (handle == 1)          /* cudaStreamLegacy: ds calls it 0 */
            handle = 0;
        }
      if (!ds_access_order_is_device (producer))
        return TRUE;    /* host order: the scratchpad's work is done */
      consumer = ds_access_order_new_for_handle (handle, ds_access_order_get_device (producer));
      Py_BEGIN_ALLOW_THREADS
      ok = ds_access_order_wait (consumer, producer, &error);
      Py_END_ALLOW_THREADS
      ds_access_order_free (consumer);
    }
  if (!ok)
    {
      raise_gerror (error);
      return FALSE;
    }
  return TRUE;
}

typedef struct
{
  guint64        address;
  int            ndim;
  const int64_t *shape;
  uint8_t        code;
  uint8_t        bits;
  const char    *what;
} Layout;

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)
 * of @layout in the memory of @source. */
static PyObject *
make_capsule (DsBlock           *source,
              const Layout      *layout,
              PyObject *const   *args,
              Py_ssize_t         nargs,
              PyObject          *kwnames)
{
  PyObject *stream = Py_None, *dl_device = Py_None, *copy = Py_None;
  int kind = ds_block_get_kind (source);
  int device, type, id;
  GError *error = NULL;
  DsBlock *block;
  Tensor *tensor;
  PyObject *capsule;

  if (nargs != 0)
    {
      PyErr_SetString (PyExc_TypeError, "__dlpack__() takes keyword arguments only");
      return NULL;
    }
  if (kwnames != NULL)
    {
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE (kwnames); i++)
        {
          const char *name = PyUnicode_AsUTF8 (PyTuple_GET_ITEM (kwnames, i));

          if (name == NULL)
            return NULL;
          if (strcmp (name, "stream") == 0)
            stream = args[i];
          else if (strcmp (name, "dl_device") == 0)
            dl_device = args[i];
          else if (strcmp (name, "copy") == 0)
            copy = args[i];
          else if (strcmp (name, "max_version") != 0)
            {
              PyErr_Format (PyExc_TypeError,
                            "__dlpack__() got an unexpected keyword argument '%s'", name);
              return NULL;
            }
        }
    }

  if (copy != Py_None && PyObject_IsTrue (copy))
    {
      PyErr_SetString (PyExc_BufferError, "a Ds block's __dlpack__ cannot copy");
      return NULL;
    }

  /* An invalid block has no scratchpad memory to ask about: export first. */
  block = ds_block_export (source, &error);
  if (block == NULL)
    return raise_gerror (error);

  device = scratchpad_device (block);
  default_device (kind, device, &type, &id);
  if (dl_device != Py_None)
    {
      if (!PyTuple_Check (dl_device) ||
          !PyArg_ParseTuple (dl_device, "ii", &type, &id))
        {
          PyErr_Format (PyExc_TypeError,
                        "dl_device must be a (device type, device id) tuple, not %R", dl_device);
          goto fail;
        }
      if (!device_allowed (kind, device, type, id))
        {
          PyErr_Format (PyExc_BufferError,
                        "%s memory on device %d cannot be exported to DLPack device %R",
                        ds_block_get_kind (block) == DS_MEMORY_KIND_HOST ? "host" :
                        ds_block_get_kind (block) == DS_MEMORY_KIND_PINNED ? "pinned" :
                        ds_block_get_kind (block) == DS_MEMORY_KIND_DEVICE ? "device" : "managed",
                        device, dl_device);
          goto fail;
        }
    }
  if (!order_consumer (block, type, stream))
    goto fail;

  tensor = g_malloc (sizeof (Tensor) + sizeof (int64_t) * MAX (layout->ndim, 1));
  memcpy (tensor->shape, layout->shape, sizeof (int64_t) * layout->ndim);
  tensor->managed.dl_tensor.data = (void *) (uintptr_t) layout->address;
  tensor->managed.dl_tensor.device.device_type = type;
  tensor->managed.dl_tensor.device.device_id = id;
  tensor->managed.dl_tensor.ndim = layout->ndim;
  tensor->managed.dl_tensor.dtype.code = layout->code;
  tensor->managed.dl_tensor.dtype.bits = layout->bits;
  tensor->managed.dl_tensor.dtype.lanes = 1;
  tensor->managed.dl_tensor.shape = tensor->shape;
  tensor->managed.dl_tensor.strides = NULL;
  tensor->managed.dl_tensor.byte_offset = 0;
  tensor->managed.manager_ctx = tensor;
  tensor->managed.deleter = tensor_delete;
  tensor->block = block;
  tensor->file = NULL;      /* finding the line costs more than the capsule */
  tensor->line = 0;
  tensor->what = layout->what;

  g_mutex_lock (&tensors_lock);
  tensor->prev = NULL;
  tensor->next = live_tensors;
  if (live_tensors != NULL)
    live_tensors->prev = tensor;
  live_tensors = tensor;
  g_mutex_unlock (&tensors_lock);

  capsule = PyCapsule_New (&tensor->managed, "dltensor", capsule_destructor);
  if (capsule == NULL)
    tensor_delete (&tensor->managed);
  return capsule;

fail:
  ds_block_unref (block);
  return NULL;
}

/* Ds.Block.__dlpack__: the bytes of the block. */
static PyObject *
block_dlpack (PyObject        *self,
              PyObject *const *args,
              Py_ssize_t       nargs,
              PyObject        *kwnames)
{
  DsBlock *block = block_pointer (self);
  int64_t size;
  Layout layout;

  if (block == NULL)
    return NULL;
  size = (int64_t) ds_block_get_size (block);
  layout.address = ds_block_get_address (block);
  layout.ndim = 1;
  layout.shape = &size;
  layout.code = 1;      /* kDLUInt */
  layout.bits = 8;
  layout.what = NULL;
  return make_capsule (block, &layout, args, nargs, kwnames);
}

static PyObject *
block_dlpack_device (PyObject *self,
                     PyObject *unused)
{
  DsBlock *block = block_pointer (self);

  if (block == NULL)
    return NULL;
  return device_tuple (ds_block_get_kind (block), scratchpad_device (block));
}

static PyMethodDef block_methods[] = {
  { "__dlpack__", (PyCFunction) (void (*) (void)) block_dlpack, METH_FASTCALL | METH_KEYWORDS,
    PyDoc_STR ("__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
               "A DLPack capsule (\"dltensor\") of the block's bytes (uint8).\n\n"
               "The tensor holds an export of the block until the consumer calls its\n"
               "deleter (or the unconsumed capsule is collected). Host and pinned\n"
               "memory are on kDLCPU, device and managed memory on kDLCUDA; dl_device\n"
               "asks for kDLCUDAHost (3) or kDLCUDA for pinned memory, kDLCUDAManaged\n"
               "(13) or kDLCPU for managed memory. A GPU consumer's stream (None: the\n"
               "legacy default stream, -1: no ordering) is made to wait for the\n"
               "scratchpad's device order; for a CPU consumer of pinned or managed\n"
               "memory the host waits for it.") },
  { "__dlpack_device__", block_dlpack_device, METH_NOARGS,
    PyDoc_STR ("__dlpack_device__()\n--\n\n"
               "(DLPack device type, device id) of the block's memory: (1, 0) for host\n"
               "and pinned memory, (2, device) for device and managed memory.") },
  { NULL, NULL, 0, NULL },
};

/* --- View: the base of Ds.BlockView ------------------------------------------ */

typedef struct
{
  PyObject_HEAD
  Export    *export;
  guint64    address;
  Py_ssize_t nbytes;
  PyObject  *shape;       /* tuple */
  int        ndim;
  int64_t   *dims;
  int        kind;
  int        device;
  uint8_t    code;
  uint8_t    bits;
  gboolean   native;      /* in the host's byte order (DLPack has no other) */
} View;

static int
View_init (View     *self,
           PyObject *args,
           PyObject *kwargs)
{
  static char *names[] = { "export", "offset", "shape", "code", "bits", "native", NULL };
  PyObject *export, *shape;
  unsigned long long offset;
  int code, bits, native = 1;
  Py_ssize_t ndim, nbytes;
  int64_t *dims;

  if (!PyArg_ParseTupleAndKeywords (args, kwargs, "O!KO!ii|p:View", names, &Export_Type,
                                    &export, &offset, &PyTuple_Type, &shape, &code, &bits,
                                    &native))
    return -1;
  if (self->export != NULL)
    {
      PyErr_SetString (PyExc_RuntimeError, "a view is initialized once");
      return -1;
    }
  ndim = PyTuple_GET_SIZE (shape);
  if (ndim > 32)
    {
      PyErr_SetString (PyExc_ValueError, "a view has at most 32 dimensions");
      return -1;
    }
  dims = g_new (int64_t, MAX (ndim, 1));
  nbytes = bits / 8;
  for (Py_ssize_t i = 0; i < ndim; i++)
    {
      long long n = PyLong_AsLongLong (PyTuple_GET_ITEM (shape, i));

      if (n == -1 && PyErr_Occurred ())
        {
          g_free (dims);
          return -1;
        }
      dims[i] = n;
      nbytes *= (Py_ssize_t) n;
    }
  self->export = (Export *) Py_NewRef (export);
  self->address = ds_block_get_address (self->export->block) + offset;
  self->nbytes = nbytes;
  self->shape = Py_NewRef (shape);
  self->ndim = (int) ndim;
  self->dims = dims;
  self->kind = ds_block_get_kind (self->export->block);
  self->device = scratchpad_device (self->export->block);
  self->code = (uint8_t) code;
  self->bits = (uint8_t) bits;
  self->native = native;
  return 0;
}

static void
View_dealloc (View *self)
{
  PyTypeObject *type = Py_TYPE (self);

  Py_CLEAR (self->shape);
  g_clear_pointer (&self->dims, g_free);
  Py_CLEAR (self->export);
  type->tp_free (self);
}

static PyObject *
View_dlpack (View            *self,
             PyObject *const *args,
             Py_ssize_t       nargs,
             PyObject        *kwnames)
{
  Layout layout = { self->address, self->ndim, self->dims, self->code, self->bits, NULL };

  if (self->export == NULL)
    {
      PyErr_SetString (PyExc_RuntimeError, "the view was not initialized");
      return NULL;
    }
  if (!self->native)
    {
      PyErr_SetString (PyExc_BufferError,
                       "DLPack has no byte order: the view is not in the host's");
      return NULL;
    }
  return make_capsule (self->export->block, &layout, args, nargs, kwnames);
}

static PyObject *
View_dlpack_device (View     *self,
                    PyObject *unused)
{
  return device_tuple (self->kind, self->device);
}

static PyMethodDef View_methods[] = {
  { "__dlpack__", (PyCFunction) (void (*) (void)) View_dlpack, METH_FASTCALL | METH_KEYWORDS,
    PyDoc_STR ("__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
               "A DLPack capsule (\"dltensor\") of this view; see Ds.Block.__dlpack__.") },
  { "__dlpack_device__", (PyCFunction) View_dlpack_device, METH_NOARGS,
    PyDoc_STR ("__dlpack_device__()\n--\n\n"
               "(DLPack device type, device id) of the view's memory.") },
  { NULL, NULL, 0, NULL },
};

static PyMemberDef View_members[] = {
  { "address", T_ULONGLONG, offsetof (View, address), READONLY, "the address of the first item" },
  { "nbytes", T_PYSSIZET, offsetof (View, nbytes), READONLY, "the size of the view in bytes" },
  { "shape", T_OBJECT, offsetof (View, shape), READONLY, "the shape (a tuple)" },
  { "_export", T_OBJECT, offsetof (View, export), READONLY, "the export the view holds" },
  { "_kind", T_INT, offsetof (View, kind), READONLY, "the memory kind (an int)" },
  { NULL, 0, 0, 0, NULL },
};

static PyTypeObject View_Type = {
  PyVarObject_HEAD_INIT (NULL, 0)
  .tp_name = "gi.overrides._gi_ds.View",
  .tp_doc = PyDoc_STR ("View(export, offset, shape, code, bits, native=True): the native "
                       "part of Ds.BlockView"),
  .tp_basicsize = sizeof (View),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
  .tp_new = PyType_GenericNew,
  .tp_init = (initproc) View_init,
  .tp_dealloc = (destructor) View_dealloc,
  .tp_methods = View_methods,
  .tp_members = View_members,
};

/* --- the lifecycle's calls ------------------------------------------------------- */

/* The override's release(), tobytes() and write() spend most of their time
 * in PyGObject's marshalling (a GLib.Bytes wrapper for every read); these
 * call the same C functions directly. The override has checked the
 * arguments' types and signs. */

static gboolean
host_only (DsBlock *block)
{
  return ds_block_get_kind (block) == DS_MEMORY_KIND_HOST;
}

/* release(scratchpad, strict): with strict, the number of live exports
 * if there are any (nothing is released); else releases
 * (ds_scratchpad_try_release (): what live exports use follows them) and
 * returns 0. */
static PyObject *
scratchpad_release (PyObject        *module,
                    PyObject *const *args,
                    Py_ssize_t       nargs)
{
  DsScratchpad *self;
  GError *error = NULL;
  Py_hash_t hash;

  if (nargs != 2)
    {
      PyErr_SetString (PyExc_TypeError, "release(scratchpad, strict)");
      return NULL;
    }
  hash = PyObject_Hash (args[0]);
  if (hash == -1)
    return NULL;
  self = (DsScratchpad *) (uintptr_t) hash;
  if (!DS_IS_SCRATCHPAD (self))
    {
      PyErr_SetString (PyExc_TypeError, "a Ds.Scratchpad is required");
      return NULL;
    }
  if (PyObject_IsTrue (args[1]))
    {
      guint n = ds_scratchpad_get_n_exports (self);

      if (n != 0)
        return PyLong_FromUnsignedLong (n);
    }
  if (!ds_scratchpad_try_release (self, &error))
    return raise_gerror (error);
  return PyLong_FromLong (0);
}

/* read(block, offset, length) -> bytes */
static PyObject *
block_read_bytes (PyObject        *module,
                  PyObject *const *args,
                  Py_ssize_t       nargs)
{
  DsBlock *block;
  unsigned long long offset, length;
  GError *error = NULL;
  GBytes *bytes;
  gconstpointer data;
  gsize size;
  PyObject *result;

  if (nargs != 3)
    {
      PyErr_SetString (PyExc_TypeError, "read(block, offset, length)");
      return NULL;
    }
  if ((block = block_pointer (args[0])) == NULL)
    return NULL;
  offset = PyLong_AsUnsignedLongLong (args[1]);
  length = PyLong_AsUnsignedLongLong (args[2]);
  if (PyErr_Occurred ())
    return NULL;
  if (host_only (block))
    bytes = ds_block_read (block, offset, length, &error);
  else
    {
      Py_BEGIN_ALLOW_THREADS
      bytes = ds_block_read (block, offset, length, &error);
      Py_END_ALLOW_THREADS
    }
  if (bytes == NULL)
    return raise_gerror (error);
  data = g_bytes_get_data (bytes, &size);
  result = PyBytes_FromStringAndSize (data, (Py_ssize_t) size);
  g_bytes_unref (bytes);
  return result;
}

/* write(block, offset, data): data has the buffer protocol (C-contiguous);
 * NotImplemented for one that is not. */
static PyObject *
block_write_buffer (PyObject        *module,
                    PyObject *const *args,
                    Py_ssize_t       nargs)
{
  DsBlock *block;
  unsigned long long offset;
  GError *error = NULL;
  Py_buffer view;
  gboolean ok;

  if (nargs != 3)
    {
      PyErr_SetString (PyExc_TypeError, "write(block, offset, data)");
      return NULL;
    }
  if ((block = block_pointer (args[0])) == NULL)
    return NULL;
  offset = PyLong_AsUnsignedLongLong (args[1]);
  if (PyErr_Occurred ())
    return NULL;
  if (PyObject_GetBuffer (args[2], &view, PyBUF_C_CONTIGUOUS) < 0)
    {
      PyErr_Clear ();
      Py_RETURN_NOTIMPLEMENTED;
    }
  if (host_only (block))
    ok = ds_block_write_data (block, offset, view.buf, (gsize) view.len, &error);
  else
    {
      Py_BEGIN_ALLOW_THREADS
      ok = ds_block_write_data (block, offset, view.buf, (gsize) view.len, &error);
      Py_END_ALLOW_THREADS
    }
  PyBuffer_Release (&view);
  if (!ok)
    return raise_gerror (error);
  Py_RETURN_TRUE;
}

/* --- typed arrays: block.numpy (), sp.empty () --------------------------------- */

static PyObject *ndarray_type;   /* numpy.ndarray, once the override has NumPy */
static PyObject *dtype_codes;    /* dtype-like -> numpy.dtype */
static PyObject *what_numpy;     /* "a NumPy array" */
static PyObject *what_buffer;    /* "a buffer (memoryview(block), ...)" */

/* The NumPy array of @shape_arg items of @dtype_like at @offset in the
 * memory of @block: numpy.ndarray over an Export (with the line that made
 * it); NotImplemented where the override's own path must answer (and
 * raise what it raises). */
static PyObject *
numpy_of (DsBlock    *block,
          PyObject   *dtype_like,
          PyObject   *shape_arg,
          Py_ssize_t  offset)
{
  Py_ssize_t itemsize, nbytes, n;
  gsize size;
  PyObject *descr, *shape, *array, *offset_obj;
  DsMemoryKind kind = ds_block_get_kind (block);
  Export *export;

  if (ndarray_type == NULL || kind == DS_MEMORY_KIND_DEVICE)
    Py_RETURN_NOTIMPLEMENTED;
  descr = PyDict_GetItemWithError (dtype_codes, dtype_like);
  if (descr == NULL)
    {
      PyErr_Clear ();     /* unhashable: not a dtype the cache knows */
      Py_RETURN_NOTIMPLEMENTED;
    }
  itemsize = PyLong_AsSsize_t (PyTuple_GET_ITEM (descr, 1));
  descr = PyTuple_GET_ITEM (descr, 0);
  size = ds_block_get_size (block);
  if (offset < 0 || (gsize) offset > size || !ds_block_is_valid (block))
    Py_RETURN_NOTIMPLEMENTED;

  if (shape_arg == Py_None)
    {
      if ((size - offset) % itemsize != 0)
        Py_RETURN_NOTIMPLEMENTED;
      shape = Py_BuildValue ("(n)", (Py_ssize_t) ((size - offset) / itemsize));
      if (shape == NULL)
        return NULL;
    }
  else if (PyLong_CheckExact (shape_arg))
    {
      shape = PyTuple_Pack (1, shape_arg);
      if (shape == NULL)
        return NULL;
    }
  else if (PyTuple_CheckExact (shape_arg) && PyTuple_GET_SIZE (shape_arg) <= 32)
    shape = Py_NewRef (shape_arg);
  else
    Py_RETURN_NOTIMPLEMENTED;

  nbytes = itemsize;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE (shape); i++)
    {
      PyObject *item = PyTuple_GET_ITEM (shape, i);

      n = PyLong_CheckExact (item) ? PyLong_AsSsize_t (item) : -1;
      if (n < 0 || (n != 0 && nbytes > (Py_ssize_t) (size - offset) / n))
        {
          PyErr_Clear ();
          Py_DECREF (shape);
          Py_RETURN_NOTIMPLEMENTED;
        }
      nbytes *= n;
    }
  if (nbytes == 0 || (gsize) nbytes > size - offset)
    {
      Py_DECREF (shape);
      Py_RETURN_NOTIMPLEMENTED;
    }

  if ((export = export_new (block)) == NULL)
    {
      Py_DECREF (shape);
      return NULL;
    }
  Py_SETREF (export->what, Py_NewRef (what_numpy));
  export_note_where (export);
  offset_obj = PyLong_FromSsize_t (offset);
  array = offset_obj == NULL ? NULL :
    PyObject_CallFunctionObjArgs (ndarray_type, shape, descr, (PyObject *) export, offset_obj,
                                  NULL);
  Py_XDECREF (offset_obj);
  Py_DECREF (export);
  Py_DECREF (shape);
  return array;
}

/* numpy(block, dtype, shape, offset) */
static PyObject *
block_numpy (PyObject        *module,
             PyObject *const *args,
             Py_ssize_t       nargs)
{
  DsBlock *block;
  Py_ssize_t offset;

  if (nargs != 4)
    {
      PyErr_SetString (PyExc_TypeError, "numpy(block, dtype, shape, offset)");
      return NULL;
    }
  if ((block = block_pointer (args[0])) == NULL)
    return NULL;
  if (!PyLong_CheckExact (args[3]))
    Py_RETURN_NOTIMPLEMENTED;
  offset = PyLong_AsSsize_t (args[3]);
  if (offset == -1 && PyErr_Occurred ())
    {
      PyErr_Clear ();
      Py_RETURN_NOTIMPLEMENTED;
    }
  return numpy_of (block, args[1], args[2], offset);
}

/* empty(scratchpad, shape, dtype, kind, alignment): a NumPy array of new
 * host or pinned scratch; NotImplemented for the override's own path. */
static PyObject *
scratchpad_empty (PyObject        *module,
                  PyObject *const *args,
                  Py_ssize_t       nargs)
{
  DsScratchpad *self;
  GError *error = NULL;
  Py_hash_t hash;
  long kind;
  Py_ssize_t itemsize, nbytes, alignment;
  PyObject *entry, *shape;
  DsBlock *block;
  PyObject *array;

  if (nargs != 5)
    {
      PyErr_SetString (PyExc_TypeError, "empty(scratchpad, shape, dtype, kind, alignment)");
      return NULL;
    }
  if (ndarray_type == NULL || !PyLong_Check (args[3]) || !PyLong_CheckExact (args[4]))
    Py_RETURN_NOTIMPLEMENTED;
  hash = PyObject_Hash (args[0]);
  if (hash == -1)
    return NULL;
  self = (DsScratchpad *) (uintptr_t) hash;
  kind = PyLong_AsLong (args[3]);
  alignment = PyLong_AsSsize_t (args[4]);
  if (!DS_IS_SCRATCHPAD (self) || alignment < 0 ||
      (kind != DS_MEMORY_KIND_HOST && kind != DS_MEMORY_KIND_PINNED))
    Py_RETURN_NOTIMPLEMENTED;
  entry = PyDict_GetItemWithError (dtype_codes, args[2]);
  if (entry == NULL)
    {
      PyErr_Clear ();
      Py_RETURN_NOTIMPLEMENTED;
    }
  itemsize = PyLong_AsSsize_t (PyTuple_GET_ITEM (entry, 1));
  shape = args[1];
  nbytes = itemsize;
  if (PyLong_CheckExact (shape))
    {
      Py_ssize_t n = PyLong_AsSsize_t (shape);

      if (n <= 0 || nbytes > PY_SSIZE_T_MAX / n)
        {
          PyErr_Clear ();
          Py_RETURN_NOTIMPLEMENTED;
        }
      nbytes *= n;
    }
  else if (PyTuple_CheckExact (shape) && PyTuple_GET_SIZE (shape) <= 32)
    {
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE (shape); i++)
        {
          PyObject *item = PyTuple_GET_ITEM (shape, i);
          Py_ssize_t n = PyLong_CheckExact (item) ? PyLong_AsSsize_t (item) : -1;

          if (n <= 0 || nbytes > PY_SSIZE_T_MAX / n)
            {
              PyErr_Clear ();
              Py_RETURN_NOTIMPLEMENTED;
            }
          nbytes *= n;
        }
    }
  else
    Py_RETURN_NOTIMPLEMENTED;
  if (alignment == 0)
    alignment = nbytes >= 64 ? 64 : 16;

  block = ds_scratchpad_alloc_block (self, (DsMemoryKind) kind, (gsize) nbytes,
                                     (gsize) alignment, &error);
  if (block == NULL)
    return raise_gerror (error);
  array = numpy_of (block, args[2], shape, 0);
  ds_block_unref (block);
  return array;
}

/* numpy_ready(numpy.ndarray): the fast paths may use NumPy. */
static PyObject *
numpy_ready (PyObject *module,
             PyObject *type)
{
  Py_XSETREF (ndarray_type, Py_NewRef (type));
  Py_RETURN_NONE;
}

/* dtype_code(dtype_like, numpy_dtype, itemsize): remembers what
 * @dtype_like is. */
static PyObject *
dtype_code (PyObject *module,
            PyObject *args)
{
  PyObject *key, *descr;
  Py_ssize_t itemsize;
  PyObject *value;
  int failed;

  if (!PyArg_ParseTuple (args, "OOn:dtype_code", &key, &descr, &itemsize))
    return NULL;
  if (PyDict_GET_SIZE (dtype_codes) > 256 || itemsize <= 0)
    Py_RETURN_NONE;
  value = Py_BuildValue ("(On)", descr, itemsize);
  if (value == NULL)
    return NULL;
  failed = PyDict_SetItem (dtype_codes, key, value);
  Py_DECREF (value);
  if (failed < 0)
    PyErr_Clear ();     /* unhashable: not remembered */
  Py_RETURN_NONE;
}

/* buffer_memory(obj): (address, nbytes) of a writable, C-contiguous
 * buffer, or None for an object without the buffer protocol. */
static PyObject *
buffer_memory (PyObject *module,
               PyObject *obj)
{
  Py_buffer view;
  PyObject *result;

  if (!PyObject_CheckBuffer (obj))
    Py_RETURN_NONE;
  if (PyObject_GetBuffer (obj, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
    return NULL;
  result = Py_BuildValue ("(Kn)", (unsigned long long) (uintptr_t) view.buf, view.len);
  PyBuffer_Release (&view);
  return result;
}

/* dlpack_memory(capsule): (address, nbytes, device type, device id) of an
 * unconsumed DLPack capsule's contiguous tensor. */
static PyObject *
dlpack_memory (PyObject *module,
               PyObject *capsule)
{
  DLManagedTensor *managed;
  const DLTensor *t;
  uint64_t nbytes;

  managed = PyCapsule_GetPointer (capsule, "dltensor");
  if (managed == NULL)
    return NULL;
  t = &managed->dl_tensor;
  if (t->ndim < 0 || t->dtype.bits % 8 != 0)
    {
      PyErr_SetString (PyExc_BufferError, "a DLPack tensor of whole bytes is required");
      return NULL;
    }
  nbytes = (uint64_t) t->dtype.bits / 8 * MAX (t->dtype.lanes, 1);
  for (int i = 0; i < t->ndim; i++)
    {
      if (t->shape[i] < 0)
        {
          PyErr_SetString (PyExc_BufferError, "a DLPack tensor with a negative dimension");
          return NULL;
        }
      nbytes *= (uint64_t) t->shape[i];
    }
  if (t->strides != NULL)
    {
      int64_t expect = 1;

      for (int i = t->ndim; i-- > 0;)
        {
          if (t->shape[i] != 1 && t->strides[i] != expect)
            {
              PyErr_SetString (PyExc_BufferError, "a C-contiguous DLPack tensor is required");
              return NULL;
            }
          expect *= t->shape[i];
        }
    }
  return Py_BuildValue ("(KKii)", (unsigned long long) ((uintptr_t) t->data + t->byte_offset),
                        (unsigned long long) nbytes, t->device.device_type, t->device.device_id);
}

/* --- the buffer protocol of Ds.Block ------------------------------------------- */

/* memoryview (block), bytes (block), numpy.asarray (block): the bytes of a
 * host, pinned or managed block, writable, held by an Export (with where
 * it was made) until the buffer is released. */
static int
block_getbuffer (PyObject  *self,
                 Py_buffer *view,
                 int        flags)
{
  static char empty[1];
  DsBlock *block = block_pointer (self);
  gpointer ptr;
  Export *export;

  if (block == NULL)
    return -1;
  if (ds_block_get_kind (block) == DS_MEMORY_KIND_DEVICE)
    {
      PyErr_SetString (PyExc_BufferError,
                       "a device block is not addressable by the CPU: copy it out with "
                       "block.tobytes(), or give it to a GPU array library "
                       "(__cuda_array_interface__, DLPack)");
      return -1;
    }
  if ((export = export_new (block)) == NULL)
    return -1;
  Py_SETREF (export->what, Py_NewRef (what_buffer));
  export_note_where (export);
  ptr = ds_block_get_pointer (export->block);
  if (PyBuffer_FillInfo (view, self, ptr != NULL ? ptr : empty,
                         (Py_ssize_t) ds_block_get_size (export->block), 0, flags) < 0)
    {
      Py_DECREF (export);
      return -1;
    }
  view->internal = export;
  return 0;
}

static void
block_releasebuffer (PyObject  *self,
                     Py_buffer *view)
{
  Py_XDECREF ((PyObject *) view->internal);
}

/* --- module functions ---------------------------------------------------------- */

static PyObject *
setup (PyObject *module,
       PyObject *args)
{
  PyTypeObject *type, *boxed;
  PyObject *factory;

  if (!PyArg_ParseTuple (args, "O!O:setup", &PyType_Type, &type, &factory))
    return NULL;
  /* A Ds.Block must hash as GBoxed does: as its C pointer. */
  for (boxed = type; boxed != NULL; boxed = boxed->tp_base)
    if (strcmp (boxed->tp_name, "gobject.GBoxed") == 0)
      break;
  if (boxed == NULL || type->tp_hash != boxed->tp_hash)
    {
      PyErr_SetString (PyExc_TypeError, "Ds.Block does not hash as its C pointer (GBoxed)");
      return NULL;
    }
  if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE))
    {
      PyErr_SetString (PyExc_TypeError, "Ds.Block must be the override's class");
      return NULL;
    }
  ((PyHeapTypeObject *) type)->as_buffer.bf_getbuffer = block_getbuffer;
  ((PyHeapTypeObject *) type)->as_buffer.bf_releasebuffer = block_releasebuffer;
  type->tp_as_buffer = &((PyHeapTypeObject *) type)->as_buffer;
  PyType_Modified (type);
  Py_XSETREF (block_type, (PyTypeObject *) Py_NewRef (type));
  Py_XSETREF (error_factory, Py_NewRef (factory));
  for (PyMethodDef *def = block_methods; def->ml_name != NULL; def++)
    {
      PyObject *descr = PyDescr_NewMethod (type, def);

      if (descr == NULL || PyObject_SetAttrString ((PyObject *) type, def->ml_name, descr) < 0)
        {
          Py_XDECREF (descr);
          return NULL;
        }
      Py_DECREF (descr);
    }
  Py_RETURN_NONE;
}

static PyObject *
exports_of (PyObject *module,
            PyObject *scratchpad)
{
  Py_hash_t hash = PyObject_Hash (scratchpad);
  PyObject *list;

  if (hash == -1)
    return NULL;
  if ((list = PyList_New (0)) == NULL)
    return NULL;
  for (Export *e = live_exports; e != NULL; e = e->next)
    if ((uintptr_t) ds_block_get_scratchpad (e->block) == (uintptr_t) hash &&
        PyList_Append (list, (PyObject *) e) < 0)
      {
        Py_DECREF (list);
        return NULL;
      }
  return list;
}

static PyObject *
tensors_of (PyObject *module,
            PyObject *scratchpad)
{
  Py_hash_t hash = PyObject_Hash (scratchpad);
  PyObject *list;

  if (hash == -1)
    return NULL;
  if ((list = PyList_New (0)) == NULL)
    return NULL;
  g_mutex_lock (&tensors_lock);
  for (Tensor *t = live_tensors; t != NULL; t = t->next)
    {
      const DLTensor *d = &t->managed.dl_tensor;
      PyObject *shape, *item;

      if ((uintptr_t) ds_block_get_scratchpad (t->block) != (uintptr_t) hash)
        continue;
      shape = PyTuple_New (d->ndim);
      for (int i = 0; shape != NULL && i < d->ndim; i++)
        PyTuple_SET_ITEM (shape, i, PyLong_FromLongLong (d->shape[i]));
      item = shape == NULL ? NULL :
        Py_BuildValue ("{s:K,s:N,s:i,s:i,s:(ii),s:z,s:i,s:z}", "address",
                       (unsigned long long) (uintptr_t) d->data,
                       "shape", shape, "code", d->dtype.code, "bits", d->dtype.bits,
                       "device", d->device.device_type, d->device.device_id,
                       "file", t->file, "line", t->line, "what", t->what);
      if (item == NULL || PyList_Append (list, item) < 0)
        {
          Py_XDECREF (item);
          Py_DECREF (list);
          list = NULL;
          break;
        }
      Py_DECREF (item);
    }
  g_mutex_unlock (&tensors_lock);
  return list;
}

static PyMethodDef module_methods[] = {
  { "setup", setup, METH_VARARGS,
    PyDoc_STR ("setup(block_class, error_factory): installs Block.__dlpack__ and "
               "Block.__dlpack_device__;\nerror_factory(domain, code, message) makes "
               "the GLib.Error of a GError.") },
  { "release", (PyCFunction) (void (*) (void)) scratchpad_release, METH_FASTCALL,
    PyDoc_STR ("release(scratchpad, strict): with strict, its number of live exports if "
               "any (nothing released); else releases (exported memory follows the\n"
               "exports) and returns 0") },
  { "read", (PyCFunction) (void (*) (void)) block_read_bytes, METH_FASTCALL,
    PyDoc_STR ("read(block, offset, length): bytes (ds_block_read)") },
  { "write", (PyCFunction) (void (*) (void)) block_write_buffer, METH_FASTCALL,
    PyDoc_STR ("write(block, offset, data): True (ds_block_write_data) for data with the "
               "buffer protocol, C-contiguous; NotImplemented for other data") },
  { "numpy", (PyCFunction) (void (*) (void)) block_numpy, METH_FASTCALL,
    PyDoc_STR ("numpy(block, dtype, shape, offset): a NumPy array of the block's memory "
               "(an export), or NotImplemented") },
  { "empty", (PyCFunction) (void (*) (void)) scratchpad_empty, METH_FASTCALL,
    PyDoc_STR ("empty(scratchpad, shape, dtype, kind, alignment): a NumPy array of new "
               "scratch, or NotImplemented") },
  { "numpy_ready", numpy_ready, METH_O,
    PyDoc_STR ("numpy_ready(numpy.ndarray): the fast paths may use NumPy") },
  { "dtype_code", dtype_code, METH_VARARGS,
    PyDoc_STR ("dtype_code(dtype_like, numpy_dtype, itemsize): remembers a dtype") },
  { "buffer_memory", buffer_memory, METH_O,
    PyDoc_STR ("buffer_memory(obj): (address, nbytes) of a writable C-contiguous buffer, "
               "or None") },
  { "dlpack_memory", dlpack_memory, METH_O,
    PyDoc_STR ("dlpack_memory(capsule): (address, nbytes, device type, device id)") },
  { "exports_of", exports_of, METH_O,
    PyDoc_STR ("exports_of(scratchpad): the live Export objects of its blocks") },
  { "tensors_of", tensors_of, METH_O,
    PyDoc_STR ("tensors_of(scratchpad): the live DLPack tensors of its blocks, as dicts") },
  { NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT,
  .m_name = "gi.overrides._gi_ds",
  .m_doc = PyDoc_STR ("The native half of the Ds override: exports and DLPack."),
  .m_size = -1,
  .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__gi_ds (void);

PyMODINIT_FUNC
PyInit__gi_ds (void)
{
  PyObject *module;

  if (PyType_Ready (&Export_Type) < 0 || PyType_Ready (&View_Type) < 0)
    return NULL;
  if (dtype_codes == NULL && (dtype_codes = PyDict_New ()) == NULL)
    return NULL;
  if (what_numpy == NULL && (what_numpy = PyUnicode_InternFromString ("a NumPy array")) == NULL)
    return NULL;
  if (what_buffer == NULL &&
      (what_buffer = PyUnicode_InternFromString ("a buffer (memoryview(block), bytes(block), "
                                                 "numpy.asarray(block))")) == NULL)
    return NULL;
  module = PyModule_Create (&module_def);
  if (module == NULL)
    return NULL;
  if (PyModule_AddObjectRef (module, "Export", (PyObject *) &Export_Type) < 0 ||
      PyModule_AddObjectRef (module, "View", (PyObject *) &View_Type) < 0 ||
      PyModule_AddIntConstant (module, "kDLCPU", DL_CPU) < 0 ||
      PyModule_AddIntConstant (module, "kDLCUDA", DL_CUDA) < 0 ||
      PyModule_AddIntConstant (module, "kDLCUDAHost", DL_CUDA_HOST) < 0 ||
      PyModule_AddIntConstant (module, "kDLCUDAManaged", DL_CUDA_MANAGED) < 0 ||
      PyModule_AddStringConstant (module, "DS_VERSION", DS_VERSION_S) < 0 ||
      PyModule_AddIntConstant (module, "OVERRIDE_API", GI_DS_OVERRIDE_API) < 0)
    {
      Py_DECREF (module);
      return NULL;
    }
  return module;
}
