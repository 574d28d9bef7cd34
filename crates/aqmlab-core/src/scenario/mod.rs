//! The scenario model: what a scenario file may say, validated with serde (unknown keys are
//! rejected) and then checked value by value. Every error names the key path, the bad value and
//! what is allowed. `resolve` fills in every default so the stored copy fully determines a run
//! (docs/architecture.md, principle 7). The builder that turns a scenario into a world is in `build.rs`.

pub mod build;
pub mod flow;
mod flow_spec;
mod kind;
mod record_spec;
pub mod schema;
mod serde_impls;
mod spec;
mod topology;
mod validate;

pub use flow::FlowModel;
pub use flow_spec::*;
pub use kind::{FlowKind, OnOff, OnOffDist, Repeat};
pub use record_spec::*;
pub use spec::*;
pub use topology::*;
