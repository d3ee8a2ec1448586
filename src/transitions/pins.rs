//! The store's pinned interpreters: the archive next to the store and the embedded subset
//! interpreter, behind [`InterpreterProvider`] (transitions.md §5, ailang.md §6).

use std::path::Path;

use crate::ailang::Embedded;
use crate::encoding::HashRef;
use crate::interp::archive::{Archive, ResolveError};
use crate::interp::external::External;
use crate::interp::{embedded_ref, Interpreter};

use super::publish::{InterpreterProvider, ProviderError};

/// Interpreters for the store at one path.
pub struct StorePins {
    archive: Archive,
}

impl StorePins {
    /// The pins of the store at `db` (its archive is `<db>.artifacts`).
    pub fn for_db(db: &Path) -> Self {
        StorePins {
            archive: Archive::for_db(db),
        }
    }
}

fn resolve_err(e: ResolveError) -> ProviderError {
    let integrity = matches!(e, ResolveError::HashMismatch { .. });
    let mut p = ProviderError::new(format!("{} ({})", e, e.kind()));
    p.integrity = integrity;
    p
}

impl InterpreterProvider for StorePins {
    fn embedded(&self) -> Result<Box<dyn Interpreter>, ProviderError> {
        Ok(Box::new(Embedded::new()))
    }

    fn archive(&self, path: &Path) -> Result<Box<dyn Interpreter>, ProviderError> {
        let (archived, _) = self
            .archive
            .archive(path)
            .map_err(|e| ProviderError::new(e.to_string()))?;
        Ok(Box::new(External::from_archived(&self.archive, archived)))
    }

    fn resolve(&self, reference: &HashRef) -> Result<Box<dyn Interpreter>, ProviderError> {
        if *reference == embedded_ref() {
            return self.embedded();
        }
        External::resolve(&self.archive, &reference.to_string())
            .map(|x| Box::new(x) as Box<dyn Interpreter>)
            .map_err(resolve_err)
    }

    fn archived(&self) -> Result<Vec<HashRef>, ProviderError> {
        let list = self
            .archive
            .list()
            .map_err(|e| ProviderError::new(e.to_string()))?;
        Ok(list
            .into_iter()
            .filter_map(|a| HashRef::parse(&a.hash_ref).ok())
            .collect())
    }
}
