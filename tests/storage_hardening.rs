//! What an independent attempt to break the storage found (issue 13): links where the storage
//! expects its own directory, directory modes, paths with `..`, a dangling link as storageDir, a
//! directory of another user.

mod storage_support;

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use rum_native::core::config::Config;
use rum_native::core::registry::{self, AttachError};
use rum_native::core::storage::{RealFs, Storage, StorageOptions, RUM_DIR};
use storage_support::*;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn config_for(dir: &Path) -> Config {
    Config { application_id: "app".into(), ..small_config(dir) }
}

fn attach_error(config: Config) -> String {
    match registry::attach(config) {
        Ok(_) => panic!("attach succeeded"),
        Err(AttachError::Dir(m) | AttachError::Storage(m) | AttachError::Conflict(m)) => m,
    }
}

#[test]
fn a_rum_directory_that_is_a_link_is_refused_and_its_target_left_alone() {
    let (dir, clock) = setup();
    let elsewhere = tempfile::tempdir().unwrap();
    let stale = format!("batch-{T0}-0.ndjson");
    fs::write(elsewhere.path().join(&stale), lines_of(0..2)).unwrap();
    symlink(elsewhere.path(), dir.path().join(RUM_DIR)).unwrap();

    let err = Storage::open(&small_config(dir.path()), options(&clock)).unwrap_err().to_string();
    assert!(err.contains("symbolic link"), "{err}");
    assert!(elsewhere.path().join(&stale).exists(), "the link's target is not touched");
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 1, "nothing written there");

    // Through the registry (the constructor's path), the message names the problem as well.
    let err = attach_error(config_for(dir.path()));
    assert!(err.contains("symbolic link"), "{err}");
}

#[test]
fn a_rum_directory_of_another_user_is_refused_and_left_alone() {
    let (dir, clock) = setup();
    let root = dir.path().join(RUM_DIR);
    fs::create_dir(&root).unwrap();
    let stale = format!("batch-{T0}-0.ndjson");
    fs::write(root.join(&stale), lines_of(0..2)).unwrap();
    let owner = fs::metadata(&root).unwrap().uid();
    // The file system seam expects another user than the directory's owner (whoever runs the
    // tests), as a directory of another user looks to the real one.
    let other = owner.wrapping_add(1);
    let options = StorageOptions { fs: Arc::new(RealFs::owned_by(other)), ..options(&clock) };

    let err = Storage::open(&small_config(dir.path()), options).unwrap_err().to_string();
    assert!(err.contains(&root.display().to_string()), "{err}");
    assert!(err.contains(&format!("owned by uid {owner}")) && err.contains(&format!("(uid {other})")), "{err}");
    let names: Vec<_> = fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, [stale.as_str()], "nothing written, renamed or removed there");
    assert_eq!(fs::read(root.join(&stale)).unwrap(), lines_of(0..2));
}

#[test]
fn a_rum_directory_replaced_by_a_link_while_open_is_not_followed() {
    let (dir, clock) = setup();
    let storage = open(&small_config(dir.path()), &clock);
    write_actions(&storage.sink(), 0..3, 10);
    storage.flush(TIMEOUT);
    let root = dir.path().join(RUM_DIR);
    let elsewhere = tempfile::tempdir().unwrap();
    let planted = format!("batch-{T0}-0.ndjson");
    fs::remove_dir_all(&root).unwrap();
    symlink(elsewhere.path(), &root).unwrap();
    fs::write(elsewhere.path().join(&planted), lines_of(0..2)).unwrap();

    write_actions(&storage.sink(), 3..6, 10);
    storage.flush(TIMEOUT);
    assert!(storage.next_batch().unwrap_or(None).is_none(), "no batch is read through the link");
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 1, "nothing written through the link");
    assert!(elsewhere.path().join(&planted).exists());
}

#[test]
fn every_directory_the_pipeline_creates_is_owner_only() {
    let (dir, _clock) = setup();
    let storage_dir = dir.path().join("a").join("b");
    let shared = registry::attach(config_for(&storage_dir)).unwrap();
    for d in [dir.path().join("a"), storage_dir.clone(), storage_dir.join(RUM_DIR)] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
    // Removed under the writer and created again: owner-only again.
    let root = storage_dir.join(RUM_DIR);
    fs::remove_dir_all(&root).unwrap();
    let sink = shared.storage.sink();
    write_actions(&sink, 0..2, 10);
    shared.storage.flush(TIMEOUT);
    assert_eq!(mode(&root), 0o700);
}

#[test]
fn a_dot_dot_segment_does_not_create_the_directory_before_it() {
    let (dir, _clock) = setup();
    let spelled = dir.path().join("x").join("..").join("s");
    let shared = registry::attach(config_for(&spelled)).unwrap();
    assert!(!dir.path().join("x").exists(), "x was created on the way");
    assert_eq!(shared.config.storage_dir, dir.path().join("s").canonicalize().unwrap());
}

#[test]
fn a_dangling_link_as_storage_dir_says_so() {
    let (dir, _clock) = setup();
    let link = dir.path().join("link");
    symlink(dir.path().join("nowhere"), &link).unwrap();
    let err = attach_error(config_for(&link));
    assert!(err.contains("symbolic link") && err.contains("does not exist"), "{err}");
    assert!(!err.contains("File exists"), "{err}");
}

#[test]
fn a_storage_dir_that_is_a_file_says_so() {
    let (dir, _clock) = setup();
    let file = dir.path().join("f");
    fs::write(&file, b"").unwrap();
    let err = attach_error(config_for(&file.join("sub")));
    assert!(err.contains("is not a directory"), "{err}");
}

/// Serialized lines of actions `seqs`, as the writer writes them.
fn lines_of(seqs: std::ops::Range<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    for i in seqs {
        rum_native::core::storage::json::to_writer(&mut out, &action(i, 10)).unwrap();
        out.push(b'\n');
    }
    out
}
