//! A method's params as the request carried them, and their one parse into the method's typed
//! request (the method table's rows call [`parse_params`]).

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::ApiError;

/// A method's params as the request carried them.
#[derive(Debug)]
pub enum Params<'a> {
    /// Raw JSON text borrowed from the body (`None`: no `params` member). Parsed once, straight
    /// into the method's types.
    Raw(Option<&'a RawValue>),
    /// An already parsed tree (the 1.0 translation).
    Tree(Value),
}

impl Params<'_> {
    /// The params as a tree, `Null` when absent.
    pub fn into_tree(self) -> Value {
        match self {
            Params::Raw(None) => Value::Null,
            // Raw params come from a body that parsed: they parse again.
            Params::Raw(Some(raw)) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
            Params::Tree(value) => value,
        }
    }
}

/// Params as a typed struct, or `-32602` naming the field that did not fit. Raw params are
/// parsed straight into the type; when that fails, the tree path below names the field.
pub fn parse_params<T: DeserializeOwned>(params: Params<'_>) -> Result<T, ApiError> {
    if let Params::Raw(Some(raw)) = &params
        && raw.get().starts_with('{')
        && let Ok(typed) = serde_json::from_str(raw.get())
    {
        return Ok(typed);
    }
    let params = params.into_tree();
    if !params.is_object() {
        return Err(ApiError::InvalidParams("params must be an object".into()));
    }
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ApiError::InvalidParams(inner.to_string())
        } else {
            ApiError::InvalidParams(format!("{path}: {inner}"))
        }
    })
}

/// A member of the params read by its method beyond their types (a send's inline push config
/// in `configuration`) as a typed struct, or `-32602` naming `member` and the field that did
/// not fit.
pub fn parse_member<T: DeserializeOwned>(value: &Value, member: &str) -> Result<T, ApiError> {
    if !value.is_object() {
        return Err(ApiError::InvalidParams(format!(
            "{member} must be an object"
        )));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ApiError::InvalidParams(format!("{member}: {inner}"))
        } else {
            ApiError::InvalidParams(format!("{member}.{path}: {inner}"))
        }
    })
}
