# Installs the files whose path or content depends on the install prefix, decided at install
# time rather than at configure time, because the prefix is only known then: `cmake --install
# build` installs under /usr/local (or --prefix), the .deb under /usr (CPack installs with
# DESTDIR set and CMAKE_INSTALL_PREFIX=/usr, see CMakeLists.txt).
#
#  - the systemd unit shardctl@.service: ExecStart runs the installed shardctl, Documentation names
#    the installed docs
#  - zsh completion: under /usr in Debian's vendor-completions, elsewhere in site-functions (both
#    are in Debian zsh's default $fpath)
#
# Set by the install(CODE) before this script: SHARDCTL_SOURCE_DIR, SHARDCTL_BINARY_DIR,
# SHARDCTL_BINDIR, SHARDCTL_DOCDIR, SHARDCTL_DATADIR (relative to the prefix).
set(prefix "${CMAKE_INSTALL_PREFIX}")
set(staging "${SHARDCTL_BINARY_DIR}/packaging")
file(MAKE_DIRECTORY "${staging}")

file(READ "${SHARDCTL_SOURCE_DIR}/configs/shardctl@.service" unit)
string(REPLACE "/usr/local/bin/shardctl" "${prefix}/${SHARDCTL_BINDIR}/shardctl" unit "${unit}")
string(REPLACE "file:///usr/local/share/doc/shardctl/" "file://${prefix}/${SHARDCTL_DOCDIR}/" unit
       "${unit}")
file(WRITE "${staging}/shardctl@.service" "${unit}")
file(INSTALL DESTINATION "${prefix}/lib/systemd/system" TYPE FILE
     FILES "${staging}/shardctl@.service")

if(prefix STREQUAL "/usr")
  set(zsh_dir "${prefix}/${SHARDCTL_DATADIR}/zsh/vendor-completions")
else()
  set(zsh_dir "${prefix}/${SHARDCTL_DATADIR}/zsh/site-functions")
endif()
file(INSTALL DESTINATION "${zsh_dir}" TYPE FILE
     FILES "${SHARDCTL_SOURCE_DIR}/packaging/completion/_shardctl")
