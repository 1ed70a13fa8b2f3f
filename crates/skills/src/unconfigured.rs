//! A skill whose data is not installed on this server: it routes, and says so honestly.

use async_trait::async_trait;

use crate::{Skill, SkillError, SkillInfo, SkillOutput, SkillRequest};

/// Stands in for a skill that has no data configured: every call is a `failed` task saying so.
pub struct Unconfigured {
    info: SkillInfo,
}

impl Unconfigured {
    /// A stand-in advertising `info`.
    pub fn new(info: SkillInfo) -> Self {
        Unconfigured { info }
    }
}

#[async_trait]
impl Skill for Unconfigured {
    fn info(&self) -> &SkillInfo {
        &self.info
    }

    async fn run(&self, _request: SkillRequest) -> Result<SkillOutput, SkillError> {
        Err(SkillError::Failed(format!(
            "The skill `{}` has no data configured on this server yet, so it cannot answer. \
             Ask the operator to install its data.",
            self.info.id
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;

    #[tokio::test]
    async fn says_it_has_no_data() {
        let skill = Unconfigured::new(catalog::SAINTS_OF_THE_DAY);
        let err = skill
            .run(SkillRequest::from_text("today", chrono::Utc::now()))
            .await
            .unwrap_err();
        assert!(matches!(err, SkillError::Failed(m) if m.contains("no data configured")));
    }
}
