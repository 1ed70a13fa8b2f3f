//! Settings of the client conformance kit (`[conformance]`, `A2A__CONFORMANCE__*`).

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Settings of the kit (`[conformance]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConformanceSettings {
    /// Turns the kit on (`A2A__CONFORMANCE__ENABLED`).
    pub enabled: bool,
    /// The second, explicit key needed to enable the kit with any profile but `development`
    /// and `test`.
    pub allow_with_production_profile: bool,
    /// Longest `slow;ms=N` delay honoured.
    pub max_slow_ms: u64,
    /// A client polling a terminal task more often than this is reported.
    pub min_poll_interval_ms: u64,
    /// Bytes the kit may keep for its runs, findings and remembered tokens, task ids and
    /// buckets; the oldest runs are dropped first when it is full.
    pub max_memory_bytes: usize,
    /// Most findings kept per run (oldest dropped first).
    pub max_findings_per_run: usize,
}

impl Default for ConformanceSettings {
    fn default() -> Self {
        ConformanceSettings {
            enabled: false,
            allow_with_production_profile: false,
            max_slow_ms: 10_000,
            min_poll_interval_ms: 1_000,
            max_memory_bytes: 16 * 1024 * 1024,
            max_findings_per_run: 500,
        }
    }
}

impl ConformanceSettings {
    /// Whether the kit may run under `profile` without the second key: only where no real
    /// user is expected.
    pub fn profile_allows(profile: &str) -> bool {
        matches!(profile, "development" | "test")
    }
}

impl ConformanceSettings {
    /// Checks the section's values that serde could not, under the settings' `profile`.
    pub(super) fn validate(&self, profile: &str) -> Result<(), ConfigError> {
        if self.enabled
            && !ConformanceSettings::profile_allows(profile)
            && !self.allow_with_production_profile
        {
            return Err(ConfigError::invalid(
                "conformance.enabled",
                format!(
                    "the conformance kit simulates failures and records client behaviour, so it runs only with the development or test profile (this is `{profile}`); set A2A__CONFORMANCE__ALLOW_WITH_PRODUCTION_PROFILE=true as well if you really mean it"
                ),
            ));
        }
        if self.enabled && self.max_memory_bytes < 64 * 1024 {
            return Err(ConfigError::invalid(
                "conformance.max_memory_bytes",
                "must be at least 65536 (bytes)",
            ));
        }
        Ok(())
    }
}
