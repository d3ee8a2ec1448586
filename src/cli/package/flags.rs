//! The flags the package verbs share: the package and its golden packet, and the registry.

use std::path::PathBuf;

use super::steps::stop;
use crate::cli::CliError;
use crate::package::registry::Origins;

/// The package and how its packet is checked.
#[derive(clap::Args, Debug, Clone)]
pub struct PacketArgs {
    /// The package directory (holding ailang.toml)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// A ready-packet golden the recomputed packet must equal in every field
    #[arg(long, value_name = "FILE")]
    pub golden: Option<PathBuf>,
    /// The packet's compilerVersion (default: the golden's, else the pinned publisher's
    /// `--version`, else empty)
    #[arg(long, value_name = "TEXT")]
    pub compiler_version: Option<String>,
}

/// Where the package goes.
#[derive(clap::Args, Debug, Clone)]
pub struct RegistryArgs {
    /// The registry bucket origin, https only (default https://storage.googleapis.com/ailang-registry)
    #[arg(long, value_name = "URL", conflicts_with = "loopback_registry")]
    pub registry_origin: Option<String>,
    /// A LOCAL registry on this machine (loopback only, http allowed): its origin serves both
    /// the bucket layout and POST /publish
    #[arg(long, value_name = "URL")]
    pub loopback_registry: Option<String>,
}

impl RegistryArgs {
    /// The origins, or `STOP fence=handler reason=refused`.
    pub fn origins(&self, what: &str) -> Result<Origins, CliError> {
        match &self.loopback_registry {
            Some(o) => Origins::loopback(o),
            None => Origins::production(self.registry_origin.as_deref()),
        }
        .map_err(|e| stop(what, "handler", Some("refused"), &e))
    }
}
