//! The core's end-to-end checks, one module per subject, built as one test binary: with the
//! release profile's cross-crate LTO every test binary re-optimises the core at link time, so
//! one binary instead of six is one such link.

mod bbr_checks;
mod core_checks;
mod l4s_checks;
mod layer_checks;
mod path_checks;
mod tcp_checks;
mod web_checks;
mod webpage_checks;
mod wifi_checks;
