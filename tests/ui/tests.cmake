# CTest registrations for the classroom app that run binaries rather than
# doctest cases (tests/CMakeLists.txt includes this file). The doctest cases
# of test_ui are discovered as ui/...; the window cases skip without a display,
# so they run a second time here under xvfb-run.
if(TARGET sixstep_ui)
  find_program(SIXSTEP_XVFB_RUN xvfb-run)
  if(SIXSTEP_XVFB_RUN)
    add_test(NAME ui/window-xvfb
             COMMAND ${SIXSTEP_XVFB_RUN} -a -s "-screen 0 1280x800x24 -noreset"
                     $<TARGET_FILE:test_ui> "--test-case=window:*" --no-intro --success=false)
    set_tests_properties(ui/window-xvfb PROPERTIES
      WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}" TIMEOUT 600
      # Under Xvfb there is a display: a "skipped" message means it was not found.
      FAIL_REGULAR_EXPRESSION "skipped: no display")
  else()
    add_test(NAME ui/window-xvfb COMMAND ${CMAKE_COMMAND} -E echo
             "SKIPPED: xvfb-run not found (apt-get install xvfb xauth) — the real-window test did not run")
    set_tests_properties(ui/window-xvfb PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED")
  endif()
  # The command as a user types it, with no display at all (EGL surfaceless).
  add_test(NAME ui/screenshot-cli
           COMMAND ${CMAKE_COMMAND} -E env --unset=DISPLAY --unset=WAYLAND_DISPLAY
                   $<TARGET_FILE:sixstep> screenshot "${CMAKE_SOURCE_DIR}/lessons/01-six-steps.yaml"
                   --out "${CMAKE_BINARY_DIR}/screenshots/01-six-steps" --size 1280x720)
  set_tests_properties(ui/screenshot-cli PROPERTIES PASS_REGULAR_EXPRESSION "wrote .*step-01\\.png" TIMEOUT 300)
  add_test(NAME ui/screenshot-cli-bad-size
           COMMAND $<TARGET_FILE:sixstep> screenshot "${CMAKE_SOURCE_DIR}/lessons/01-six-steps.yaml"
                   --out "${CMAKE_BINARY_DIR}/screenshots/unused" --size 12by7)
  set_tests_properties(ui/screenshot-cli-bad-size PROPERTIES WILL_FAIL TRUE)
  set_tests_properties(ui/screenshot-cli-bad-size PROPERTIES LABELS ui)
  # Seconds each on 2 cores (measured: window 12 s, screenshot 4 s).
  set_tests_properties(ui/window-xvfb ui/screenshot-cli PROPERTIES LABELS "ui;slow")
else()
  add_test(NAME ui/skipped COMMAND ${CMAKE_COMMAND} -E echo
           "SKIPPED: GUI tests need Dear ImGui, GLFW and OpenGL/EGL (apt-get install libimgui-dev libglfw3-dev libegl-dev libgl1-mesa-dri libegl-mesa0 xvfb)")
  set_tests_properties(ui/skipped PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED")
endif()
