#!/usr/bin/env bash
# Every #include "folder/..." of a file in sim/ must name its own folder or one its CMake target
# may use: a header, what the target links PUBLIC (and, through them, what those link PUBLIC);
# a source, that and its PRIVATE links with what they link PUBLIC. The table is sim/CMakeLists.txt
# itself, written out by CMake as layering.txt: "folder target public=a,b private=c" per line.
# Usage: check_includes.sh SIM_DIR LAYERING_TXT. Prints each wrong include as file:line and fails.
set -euo pipefail
sim_dir=$1
table=$2

declare -A folder_of public private
while read -r folder target pub priv; do
  folder_of[$target]=$folder
  public[$target]=${pub#public=}
  private[$target]=${priv#private=}
done <"$table"

# The folders a target's headers may use: its PUBLIC links, each with its own such folders.
public_folders() {
  local dep
  for dep in ${public[$1]//,/ }; do
    [ "${folder_of[$dep]}" != "-" ] && echo "${folder_of[$dep]}"
    public_folders "$dep"
  done
}
source_folders() {
  local dep
  public_folders "$1"
  for dep in ${private[$1]//,/ }; do
    [ "${folder_of[$dep]}" != "-" ] && echo "${folder_of[$dep]}"
    public_folders "$dep"
  done
}

declare -A header_ok source_ok target_of
for target in "${!folder_of[@]}"; do
  folder=${folder_of[$target]}
  [ "$folder" = "-" ] && continue
  target_of[$folder]=$target
  header_ok[$folder]=" $folder $(public_folders "$target" | sort -u | tr '\n' ' ')"
  source_ok[$folder]=" $folder $(source_folders "$target" | sort -u | tr '\n' ' ')"
done

failures=0
cd "$sim_dir"
while IFS= read -r file; do
  folder=$(dirname "$file")
  if [ -z "${target_of[$folder]:-}" ]; then
    echo "sim/$file: folder sim/$folder is no library of sim/CMakeLists.txt (clustersim_library)"
    failures=$((failures + 1))
    continue
  fi
  case $file in *.hpp) allowed=${header_ok[$folder]} kind=header ;; *) allowed=${source_ok[$folder]} kind=source ;; esac
  while IFS=: read -r line included; do
    used=$(dirname "$included")
    [[ "$allowed" == *" $used "* ]] && continue
    echo "sim/$file:$line: includes \"$included\", but a $kind of sim/$folder" \
      "(${target_of[$folder]}) may use only:$allowed"
    failures=$((failures + 1))
  done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done < <(find . -name '*.cpp' -o -name '*.hpp' | sed 's|^\./||' | sort)

if [ "$failures" -gt 0 ]; then
  echo "$failures include(s) against the layering of sim/CMakeLists.txt"
  exit 1
fi
echo "layering: every include of sim/ is one its library may use"
