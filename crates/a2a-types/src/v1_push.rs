//! The 1.0 wire types of push notifications and their conversions to and from the 0.3 forms the
//! server stores. 1.0 flattens a config and its task into one `TaskPushNotificationConfig`
//! (`id`, `taskId`, `url`, `token`, `authentication`) and names one authentication `scheme`
//! where 0.3 lists `schemes`.

use serde::{Deserialize, Serialize};

use crate::push::{
    PushNotificationAuthenticationInfo, PushNotificationConfig, TaskPushNotificationConfig,
};

/// How a webhook receiver expects to be authenticated, in 1.0 form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct V1AuthenticationInfo {
    /// An HTTP authentication scheme name, e.g. `Bearer`.
    pub scheme: String,
    /// Credentials for that scheme, if the receiver gave any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A push config bound to its task, in 1.0 form: the params of
/// `CreateTaskPushNotificationConfig`, the result of the get and create methods, an entry of
/// the list, and (its `taskId` empty) the inline config of `SendMessage`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct V1TaskPushNotificationConfig {
    /// Ignored (one tenant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The config's id, unique within its task; the server assigns one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The task; empty or absent in an inline config, whose task is the one the send starts.
    #[serde(default)]
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The webhook URL the task is posted to.
    pub url: String,
    /// An opaque token echoed in `X-A2A-Notification-Token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// How the receiver expects to be authenticated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<V1AuthenticationInfo>,
}

impl V1TaskPushNotificationConfig {
    /// The config alone, in the 0.3 form the server stores.
    pub fn into_config(self) -> PushNotificationConfig {
        PushNotificationConfig {
            id: self.id,
            url: self.url,
            token: self.token,
            authentication: self
                .authentication
                .map(|auth| PushNotificationAuthenticationInfo {
                    schemes: vec![auth.scheme],
                    credentials: auth.credentials,
                }),
        }
    }
}

impl From<TaskPushNotificationConfig> for V1TaskPushNotificationConfig {
    fn from(bound: TaskPushNotificationConfig) -> Self {
        let config = bound.push_notification_config;
        V1TaskPushNotificationConfig {
            tenant: None,
            id: config.id,
            task_id: bound.task_id,
            url: config.url,
            token: config.token,
            // 1.0 names one scheme: a 0.3 config's first stands for it.
            authentication: config.authentication.and_then(|auth| {
                let credentials = auth.credentials;
                auth.schemes
                    .into_iter()
                    .next()
                    .map(|scheme| V1AuthenticationInfo {
                        scheme,
                        credentials,
                    })
            }),
        }
    }
}

/// Params of `GetTaskPushNotificationConfig` and `DeleteTaskPushNotificationConfig`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfigRequest {
    /// Ignored (one tenant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The config.
    pub id: String,
}

/// Params of `ListTaskPushNotificationConfigs`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Ignored (one tenant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Configs per page; absent or 0: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "page_size")]
    pub page_size: Option<u32>,
    /// The previous page's `nextPageToken`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "page_token")]
    pub page_token: Option<String>,
}

/// The result of `ListTaskPushNotificationConfigs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// This page's configs, ordered by id.
    pub configs: Vec<V1TaskPushNotificationConfig>,
    /// The token of the next page; empty on the last page.
    pub next_page_token: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_flat_1_0_config_becomes_the_0_3_config_and_back() {
        let wire = json!({"id": "c-1", "taskId": "t-1", "url": "https://hooks.example/a2a",
            "token": "tok", "authentication": {"scheme": "Bearer", "credentials": "x"}});
        let v1: V1TaskPushNotificationConfig = serde_json::from_value(wire.clone()).unwrap();
        let config = v1.clone().into_config();
        assert_eq!(config.authentication.as_ref().unwrap().schemes, ["Bearer"]);
        let bound = TaskPushNotificationConfig {
            task_id: v1.task_id.clone(),
            push_notification_config: config,
        };
        assert_eq!(
            serde_json::to_value(V1TaskPushNotificationConfig::from(bound)).unwrap(),
            wire
        );
    }

    #[test]
    fn push_requests_read_proto_field_names_too() {
        let config: V1TaskPushNotificationConfig =
            serde_json::from_value(json!({"task_id": "t-1", "url": "https://hooks.example/a"}))
                .unwrap();
        assert_eq!(config.task_id, "t-1");
        let one: TaskPushNotificationConfigRequest =
            serde_json::from_value(json!({"task_id": "t-1", "id": "c-1"})).unwrap();
        assert_eq!(one.task_id, "t-1");
        let list: ListTaskPushNotificationConfigsRequest =
            serde_json::from_value(json!({"task_id": "t-1", "page_size": 2, "page_token": "c-1"}))
                .unwrap();
        assert_eq!(
            (
                list.task_id.as_str(),
                list.page_size,
                list.page_token.as_deref()
            ),
            ("t-1", Some(2), Some("c-1"))
        );
    }

    #[test]
    fn an_inline_config_needs_no_task_id() {
        let v1: V1TaskPushNotificationConfig =
            serde_json::from_value(json!({"url": "https://hooks.example/a2a"})).unwrap();
        assert!(v1.task_id.is_empty());
        assert!(
            serde_json::from_value::<V1TaskPushNotificationConfig>(json!({"taskId": "t"})).is_err()
        );
    }
}
