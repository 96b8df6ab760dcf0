/* ds-bench-dali.cpp: NVIDIA DALI's own DynamicScratchpad, for bench-lifecycle
 *
 * Copyright 2026 The ds authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Built only with -Ddali_source=<a DALI checkout> (tests/bench/meson.build),
 * against DALI's headers and the sources of its core that its default
 * memory resources need, compiled as they are: the scratchpad that DALI's
 * operators use, over the pools they use (on a GPU with the virtual
 * memory API, the device kind's async pool over cuda_vm_resource).
 */

#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <exception>
#include <string>
#include <typeinfo>

#include "dali/core/mm/cu_vm.h"
#include "dali/core/mm/default_resources.h"
#include "dali/kernels/dynamic_scratchpad.h"

#include "ds-bench-dali.h"

namespace mm = dali::mm;
using dali::AccessOrder;
using dali::kernels::DynamicScratchpad;
using dali::kernels::Scratchpad;

namespace {

std::string last_error;
std::string description;

/* DsMemoryKind (host, pinned, device, managed: 0..3) to DALI's kind id. */
mm::memory_kind_id
kind_id (int kind)
{
  static const mm::memory_kind_id ids[4] = {
    mm::memory_kind_id::host, mm::memory_kind_id::pinned,
    mm::memory_kind_id::device, mm::memory_kind_id::managed,
  };

  return ids[kind & 3];
}

template <typename Kind>
inline void
alloc_typed (DynamicScratchpad &sp,
             unsigned           count,
             const size_t      *sizes,
             size_t             alignment,
             void * volatile   *sink)
{
  for (unsigned k = 0; k < count; k++)
    *sink = sp.AllocImpl<Kind> (sizes[k], alignment);
}

template <typename T>
std::string
type_name (const T *p)
{
  if (p == nullptr)
    return "(none)";

  int status = 0;
  const char *mangled = typeid (*p).name ();
  char *demangled = abi::__cxa_demangle (mangled, nullptr, nullptr, &status);
  std::string s = demangled != nullptr ? demangled : mangled;

  std::free (demangled);
  return s;
}

const char *
describe (void)
{
  try
    {
      description = "# DALI: the CUDA virtual memory API ";
      description += mm::cuvm::IsSupported () ? "is" : "is not";
      description += " supported here\n# DALI default host resource: ";
      description += type_name (mm::GetDefaultResource<mm::memory_kind::host> ());
      description += "\n# DALI default pinned resource: ";
      description += type_name (mm::GetDefaultResource<mm::memory_kind::pinned> ());
      description += "\n# DALI default device resource: ";
      description += type_name (mm::GetDefaultResource<mm::memory_kind::device> ());
      description += "\n";
    }
  catch (const std::exception &e)
    {
      description = std::string ("# DALI default resources: ") + e.what () + "\n";
    }
  return description.c_str ();
}

int
lifecycle (void                *stream,
           unsigned             n_runs,
           const int           *kinds,
           const unsigned      *counts,
           const size_t *const *sizes,
           size_t               alignment,
           int                  iface,
           void * volatile     *sink)
{
  try
    {
      /* DALI's AccessOrder (cudaStream_t) looks up the stream's device. */
      AccessOrder order (static_cast<cudaStream_t> (stream));
      DynamicScratchpad sp ({}, order);

      if (iface)
        {
          Scratchpad *s = &sp;

          /* The dynamic type hidden from the compiler: the call stays
           * virtual, as in a kernel handed a Scratchpad *. */
          __asm__ volatile ("" : "+r" (s));
          for (unsigned r = 0; r < n_runs; r++)
            {
              mm::memory_kind_id id = kind_id (kinds[r]);

              for (unsigned k = 0; k < counts[r]; k++)
                *sink = s->Alloc (id, sizes[r][k], alignment);
            }
        }
      else
        {
          for (unsigned r = 0; r < n_runs; r++)
            switch (kinds[r] & 3)
              {
              case 0:
                alloc_typed<mm::memory_kind::host> (sp, counts[r], sizes[r], alignment, sink);
                break;
              case 1:
                alloc_typed<mm::memory_kind::pinned> (sp, counts[r], sizes[r], alignment, sink);
                break;
              case 2:
                alloc_typed<mm::memory_kind::device> (sp, counts[r], sizes[r], alignment, sink);
                break;
              default:
                alloc_typed<mm::memory_kind::managed> (sp, counts[r], sizes[r], alignment, sink);
                break;
              }
        }
      return 0;
    }
  catch (const std::exception &e)
    {
      last_error = e.what ();
      return -1;
    }
}

const char *
error (void)
{
  return last_error.c_str ();
}

} // namespace

extern "C" __attribute__ ((visibility ("default"))) const DsBenchDali ds_bench_dali = {
  describe, lifecycle, error,
};
