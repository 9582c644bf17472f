// The one place that names the backends this binary was built with. Programs (the CLI, the C
// API, tests) call registerBuiltinBackends() once before opening a Session or calling
// createBackend() (runtime/backend.h); the runtime itself names no concrete backend.
#pragma once

namespace wf {

// Registers "cpu", and "cuda" in builds with the CUDA backend (WF_HAVE_CUDA). Idempotent and
// thread-safe. Registration is explicit because the backends live in static libraries, whose
// unreferenced static initialisers the linker drops.
void registerBuiltinBackends();

}  // namespace wf
