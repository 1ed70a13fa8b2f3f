//! The 0.3 wire types of push notifications: where a client wants to be told about a task's
//! changes (`tasks/pushNotificationConfig/{set,get,list,delete}` and the inline
//! `configuration.pushNotificationConfig` of `message/send`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where and how the server posts a task's changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationConfig {
    /// The config's id, unique within its task; the server assigns one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The webhook URL the task is posted to.
    pub url: String,
    /// An opaque token echoed in `X-A2A-Notification-Token`, so the receiver can tell its own
    /// notifications from forged ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// How the receiver expects to be authenticated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushNotificationAuthenticationInfo>,
}

/// The authentication a webhook receiver asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushNotificationAuthenticationInfo {
    /// HTTP authentication scheme names, e.g. `Bearer`.
    pub schemes: Vec<String>,
    /// Credentials for those schemes, if the receiver gave any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A push config bound to its task: the params of `tasks/pushNotificationConfig/set` and the
/// result of every push-config method.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// The task.
    pub task_id: String,
    /// The config.
    pub push_notification_config: PushNotificationConfig,
}

/// Params of `tasks/pushNotificationConfig/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigParams {
    /// The task id.
    pub id: String,
    /// The config; absent: the task's first one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config_id: Option<String>,
    /// Accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Params of `tasks/pushNotificationConfig/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListTaskPushNotificationConfigParams {
    /// The task id.
    pub id: String,
    /// Accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Params of `tasks/pushNotificationConfig/delete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigParams {
    /// The task id.
    pub id: String,
    /// The config to delete.
    pub push_notification_config_id: String,
    /// Accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_params_read_the_camel_case_wire_form() {
        let wire = json!({"taskId": "t-1", "pushNotificationConfig": {
            "id": "c-1", "url": "https://hooks.example/a2a", "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "x"}}});
        let config: TaskPushNotificationConfig = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(config.push_notification_config.id.as_deref(), Some("c-1"));
        assert_eq!(serde_json::to_value(&config).unwrap(), wire);
    }

    #[test]
    fn optional_fields_are_left_out() {
        let config = PushNotificationConfig {
            id: None,
            url: "https://hooks.example".into(),
            token: None,
            authentication: None,
        };
        assert_eq!(
            serde_json::to_value(&config).unwrap(),
            json!({"url": "https://hooks.example"})
        );
        let get: GetTaskPushNotificationConfigParams =
            serde_json::from_value(json!({"id": "t", "pushNotificationConfigId": "c"})).unwrap();
        assert_eq!(get.push_notification_config_id.as_deref(), Some("c"));
    }
}
