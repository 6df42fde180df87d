// Trace keys every model answers, named once for the engine that emits them
// and the front ends that read them. Each model kind adds its own
// (pipeline/delivery/trace_keys.h, pipeline/llm/trace_keys.h); the paths and
// their meanings are declared in each kind's ModelDescription.
#pragma once

namespace sixstep::keys {

// Every stage (Trace::lookup answers them for any event).
inline constexpr char ms[] = "ms";              // the stage's wall time
inline constexpr char warnings[] = "warnings";  // its warnings, joined by "; "

// Every model's load stage.
inline constexpr char cold[] = "cold";  // "yes": this request paid the load; "no": reused

// Emitted by the Pipeline after load and after respond.
inline constexpr char weights_checksum[] = "weights_checksum";
inline constexpr char weights_unchanged[] = "weights_unchanged";  // respond only
inline constexpr char checksum_ms[] = "checksum_ms";              // the hash's own time, not the stage's

// Every Response.
inline constexpr char text[] = "text";

// Every model's own values, "model.<key>" (Model::property answers the rest).
inline constexpr char loaded[] = "loaded";
inline constexpr char checksum[] = "checksum";
// A model that times its cold load answers it as "model.cold_load_ms".
inline constexpr char cold_load_ms[] = "cold_load_ms";

}  // namespace sixstep::keys
