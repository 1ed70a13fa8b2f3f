//! The set of skills a server offers, looked up by id.

use std::sync::Arc;

use crate::Skill;

/// Skills by id, in registration order (the order of the agent card).
#[derive(Clone, Default)]
pub struct SkillRegistry {
    skills: Vec<Arc<dyn Skill>>,
}

impl SkillRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        SkillRegistry::default()
    }

    /// Adds a skill, replacing one with the same id so a deployment can swap an implementation.
    pub fn register(&mut self, skill: Arc<dyn Skill>) {
        let id = skill.info().id;
        match self.skills.iter_mut().find(|s| s.info().id == id) {
            Some(slot) => *slot = skill,
            None => self.skills.push(skill),
        }
    }

    /// The skill with this id.
    pub fn get(&self, id: &str) -> Option<&Arc<dyn Skill>> {
        self.skills.iter().find(|s| s.info().id == id)
    }

    /// Every skill, in card order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Skill>> {
        self.skills.iter()
    }

    /// The ids, in card order (for `data.availableSkills`).
    pub fn ids(&self) -> Vec<&'static str> {
        self.skills.iter().map(|s| s.info().id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SkillError, SkillInfo, SkillOutput, SkillRequest, catalog};
    use async_trait::async_trait;

    struct Named(SkillInfo);

    #[async_trait]
    impl Skill for Named {
        fn info(&self) -> &SkillInfo {
            &self.0
        }

        async fn run(&self, _request: SkillRequest) -> Result<SkillOutput, SkillError> {
            Err(SkillError::Failed(self.0.id.into()))
        }
    }

    #[test]
    fn register_replaces_by_id_and_keeps_order() {
        let mut r = SkillRegistry::new();
        for info in catalog::ALL {
            r.register(Arc::new(Named(info)));
        }
        let replacement = SkillInfo {
            name: "Replacement",
            ..catalog::DOCUMENT_SEARCH
        };
        r.register(Arc::new(Named(replacement)));
        assert_eq!(
            r.ids(),
            vec![
                "catholic_qa",
                "document_search",
                "document_fetch",
                "liturgical_readings",
                "saints_of_the_day"
            ]
        );
        assert_eq!(r.get("document_search").unwrap().info().name, "Replacement");
        assert!(r.get("nope").is_none());
    }
}
