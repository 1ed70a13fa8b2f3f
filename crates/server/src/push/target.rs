//! What a push config must be when it is set: a well-formed `http(s)` URL of bounded length
//! without credentials, `https` under the production profile, no literal address or
//! `localhost` name that delivery would refuse anyway, and bounded ids, tokens and
//! authentication fields. Hostnames are resolved and checked at every delivery, not here:
//! what a name resolves to may change.

use std::net::IpAddr;

use a2a_types::PushNotificationConfig;
use reqwest::Url;
use reqwest::header::HeaderValue;

use super::PushError;
use super::address::forbidden_reason;
use crate::config::PushSettings;

/// Longest config id, as the other client-chosen ids.
pub const MAX_CONFIG_ID_BYTES: usize = 256;
/// Most authentication schemes a config may list.
pub const MAX_SCHEMES: usize = 8;
/// Longest authentication scheme name.
pub const MAX_SCHEME_BYTES: usize = 64;
/// Longest authentication credentials.
pub const MAX_CREDENTIALS_BYTES: usize = 4096;

/// Checks a config a client wants to set; the error names the field and the rule.
pub fn check_config(
    config: &PushNotificationConfig,
    settings: &PushSettings,
    production: bool,
) -> Result<Url, PushError> {
    let invalid = |message: String| Err(PushError::InvalidConfig(message));
    if let Some(id) = &config.id
        && (id.is_empty() || id.len() > MAX_CONFIG_ID_BYTES)
    {
        return invalid(format!(
            "pushNotificationConfig.id must be 1 to {MAX_CONFIG_ID_BYTES} bytes"
        ));
    }
    if let Some(token) = &config.token {
        if token.len() > settings.max_token_bytes {
            return invalid(format!(
                "pushNotificationConfig.token is longer than {} bytes",
                settings.max_token_bytes
            ));
        }
        if HeaderValue::from_str(token).is_err() {
            return invalid(
                "pushNotificationConfig.token must be visible ASCII (it is sent as a header)"
                    .into(),
            );
        }
    }
    if let Some(auth) = &config.authentication {
        if auth.schemes.len() > MAX_SCHEMES
            || auth.schemes.iter().any(|s| s.len() > MAX_SCHEME_BYTES)
        {
            return invalid(format!(
                "pushNotificationConfig.authentication.schemes: at most {MAX_SCHEMES}, each at most {MAX_SCHEME_BYTES} bytes"
            ));
        }
        if auth
            .credentials
            .as_ref()
            .is_some_and(|c| c.len() > MAX_CREDENTIALS_BYTES)
        {
            return invalid(format!(
                "pushNotificationConfig.authentication.credentials is longer than {MAX_CREDENTIALS_BYTES} bytes"
            ));
        }
    }
    check_url(&config.url, settings, production)
}

/// Checks a webhook URL (see the module documentation) and returns it parsed.
pub fn check_url(url: &str, settings: &PushSettings, production: bool) -> Result<Url, PushError> {
    let invalid = |message: String| Err(PushError::InvalidConfig(message));
    if url.len() > settings.max_url_bytes {
        return invalid(format!(
            "pushNotificationConfig.url is longer than {} bytes",
            settings.max_url_bytes
        ));
    }
    let Ok(parsed) = Url::parse(url) else {
        return invalid("pushNotificationConfig.url is not an absolute URL".into());
    };
    match parsed.scheme() {
        "https" => {}
        "http" if !production => {}
        "http" => {
            return invalid(
                "pushNotificationConfig.url must be https:// under the production profile".into(),
            );
        }
        _ => return invalid("pushNotificationConfig.url must be http:// or https://".into()),
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return invalid(
            "pushNotificationConfig.url must not carry credentials; use token instead".into(),
        );
    }
    let Some(host) = parsed.host_str().filter(|h| !h.is_empty()) else {
        return invalid("pushNotificationConfig.url has no host".into());
    };
    if !settings.allow_private_targets {
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok();
        if let Some(reason) = literal.and_then(forbidden_reason) {
            return invalid(format!(
                "pushNotificationConfig.url points at a {reason} address, which this server does not deliver to"
            ));
        }
        if is_localhost_name(host) {
            return invalid(
                "pushNotificationConfig.url points at localhost, which this server does not deliver to"
                    .into(),
            );
        }
    }
    Ok(parsed)
}

/// `localhost` and its subdomains, which resolve to the host itself (RFC 6761).
fn is_localhost_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_types::PushNotificationAuthenticationInfo;

    fn config(url: &str) -> PushNotificationConfig {
        PushNotificationConfig {
            id: None,
            url: url.into(),
            token: None,
            authentication: None,
        }
    }

    fn refusal(config: &PushNotificationConfig, production: bool) -> String {
        match check_config(config, &PushSettings::default(), production) {
            Err(PushError::InvalidConfig(message)) => message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn https_only_under_the_production_profile() {
        let settings = PushSettings::default();
        let plain = config("http://hooks.example.org/a2a");
        assert!(check_config(&plain, &settings, false).is_ok());
        assert!(refusal(&plain, true).contains("https://"));
        assert!(check_config(&config("https://hooks.example.org/a2a"), &settings, true).is_ok());
    }

    #[test]
    fn bad_urls_are_refused_naming_the_field() {
        for url in [
            "not a url",
            "/relative",
            "ftp://hooks.example.org/",
            "file:///etc/passwd",
            "https://user:pass@hooks.example.org/",
            "http://127.0.0.1:8080/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://169.254.169.254/latest/meta-data",
            "http://localhost:9000/",
            "http://api.localhost./",
        ] {
            let message = refusal(&config(url), false);
            assert!(
                message.contains("pushNotificationConfig.url"),
                "{url}: {message}"
            );
        }
        let long = format!("https://hooks.example.org/{}", "a".repeat(3000));
        assert!(refusal(&config(&long), false).contains("longer than"));
    }

    #[test]
    fn private_literals_pass_when_allowed() {
        let settings = PushSettings {
            allow_private_targets: true,
            ..PushSettings::default()
        };
        assert!(check_config(&config("http://127.0.0.1:9/"), &settings, false).is_ok());
    }

    #[test]
    fn tokens_ids_and_authentication_are_bounded() {
        let mut long_token = config("https://hooks.example.org/");
        long_token.token = Some("t".repeat(513));
        assert!(refusal(&long_token, false).contains("token"));
        let mut newline_token = config("https://hooks.example.org/");
        newline_token.token = Some("a\r\nX-Evil: 1".into());
        assert!(refusal(&newline_token, false).contains("token"));
        let mut empty_id = config("https://hooks.example.org/");
        empty_id.id = Some(String::new());
        assert!(refusal(&empty_id, false).contains("id"));
        let mut schemes = config("https://hooks.example.org/");
        schemes.authentication = Some(PushNotificationAuthenticationInfo {
            schemes: vec!["Bearer".into(); 9],
            credentials: None,
        });
        assert!(refusal(&schemes, false).contains("schemes"));
    }
}
