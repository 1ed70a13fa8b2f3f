//! The four push-config methods: a task's webhooks set, read, listed and removed, each
//! charged as a read on a task of the caller's.

use skills::Bucket;

use a2a_types::TaskPushNotificationConfig;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::push::Push;

use super::A2aService;
use super::requests::{
    DeletePushConfigRequest, GetPushConfigRequest, ListPushConfigsRequest, SetPushConfigRequest,
};

/// The refusal of a push config id the task has none of (`None`: the task has no config).
pub(super) fn no_push_config(task_id: &str, config_id: Option<&str>) -> ApiError {
    ApiError::InvalidParams(match config_id {
        Some(id) => format!("task `{task_id}` has no push notification config `{id}`"),
        None => format!("task `{task_id}` has no push notification config"),
    })
}

impl A2aService {
    /// Sets a push config on the caller's task, working or kept (a kept task's configs are
    /// told of a later turn's changes); charged as a read.
    pub async fn set_push_config(
        &self,
        principal: &Principal,
        request: SetPushConfigRequest,
    ) -> Result<TaskPushNotificationConfig, ApiError> {
        let push = self.push_of_owned_task(principal, &request.task_id).await?;
        Ok(push
            .set_config(
                &principal.owner,
                &request.task_id,
                request.config,
                request.wire,
            )
            .await?)
    }

    /// One push config of the caller's task; charged as a read.
    pub async fn get_push_config(
        &self,
        principal: &Principal,
        request: GetPushConfigRequest,
    ) -> Result<TaskPushNotificationConfig, ApiError> {
        let push = self.push_of_owned_task(principal, &request.task_id).await?;
        let owner = &principal.owner;
        let config_id = request.config_id.as_deref();
        push.get_config(owner, &request.task_id, config_id)
            .await?
            .ok_or_else(|| no_push_config(&request.task_id, config_id))
    }

    /// A page of the caller's task's push configs, and the id the next page starts after
    /// when there is one; charged as a read.
    pub async fn list_push_configs(
        &self,
        principal: &Principal,
        request: ListPushConfigsRequest,
    ) -> Result<(Vec<TaskPushNotificationConfig>, Option<String>), ApiError> {
        let push = self.push_of_owned_task(principal, &request.task_id).await?;
        let owner = &principal.owner;
        let after = request.page.after.as_deref();
        let mut configs: Vec<TaskPushNotificationConfig> = push
            .list_configs(owner, &request.task_id)
            .await?
            .into_iter()
            .filter(|config| after < config.push_notification_config.id.as_deref())
            .collect();
        let next = match request.page.size {
            Some(size) if configs.len() > size => {
                configs.truncate(size);
                configs
                    .last()
                    .and_then(|config| config.push_notification_config.id.clone())
            }
            _ => None,
        };
        Ok((configs, next))
    }

    /// Removes a push config of the caller's task; an id the task has no config of is
    /// refused (`-32602`); charged as a read.
    pub async fn delete_push_config(
        &self,
        principal: &Principal,
        request: DeletePushConfigRequest,
    ) -> Result<(), ApiError> {
        let push = self.push_of_owned_task(principal, &request.task_id).await?;
        let owner = &principal.owner;
        if push
            .delete_config(owner, &request.task_id, &request.config_id)
            .await?
        {
            Ok(())
        } else {
            Err(no_push_config(&request.task_id, Some(&request.config_id)))
        }
    }

    /// The first step of the four push-config methods: push notifications offered, the call
    /// charged as a read, and the task the caller's own (working or kept).
    pub(super) async fn push_of_owned_task(
        &self,
        principal: &Principal,
        task_id: &str,
    ) -> Result<&Push, ApiError> {
        let push = self.push()?;
        self.charge(principal, Bucket::Read).await?;
        self.owned_task(&principal.owner, task_id).await?;
        Ok(push)
    }
}
