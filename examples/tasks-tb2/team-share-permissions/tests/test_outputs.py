import grp
import os
import pwd
import stat
from pathlib import Path

SHARED = Path("/app/shared")


def test_group_analysts():
    """The analysts group exists with GID 1500."""
    group = grp.getgrnam("analysts")
    assert group.gr_gid == 1500, f"analysts has GID {group.gr_gid}"


def test_users_exist_with_bash_and_home():
    """maria and tom exist, log in with bash and have a home directory."""
    for name in ("maria", "tom"):
        user = pwd.getpwnam(name)
        assert user.pw_shell == "/bin/bash", f"{name} has shell {user.pw_shell}"
        assert os.path.isdir(user.pw_dir), f"{name} has no home directory {user.pw_dir}"


def test_users_in_analysts():
    """Both users belong to analysts (primary or supplementary)."""
    group = grp.getgrnam("analysts")
    for name in ("maria", "tom"):
        user = pwd.getpwnam(name)
        assert name in group.gr_mem or user.pw_gid == group.gr_gid, f"{name} not in analysts"


def test_shared_directory_ownership_and_mode():
    """/app/shared is root:analysts with mode 2770."""
    st = SHARED.stat()
    assert stat.S_ISDIR(st.st_mode), "/app/shared is not a directory"
    assert st.st_uid == 0, "/app/shared must be owned by root"
    assert st.st_gid == grp.getgrnam("analysts").gr_gid, "/app/shared must belong to analysts"
    assert stat.S_IMODE(st.st_mode) == 0o2770, oct(stat.S_IMODE(st.st_mode))


def test_welcome_file_owned_by_maria():
    """welcome.txt was written by maria and inherited the analysts group."""
    welcome = SHARED / "welcome.txt"
    st = welcome.stat()
    assert st.st_uid == pwd.getpwnam("maria").pw_uid, "welcome.txt is not owned by maria"
    assert st.st_gid == grp.getgrnam("analysts").gr_gid, "welcome.txt is not in group analysts"
    assert welcome.read_text() == "hello analysts\n"
