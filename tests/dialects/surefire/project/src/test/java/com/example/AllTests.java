package com.example;

import org.junit.runner.RunWith;
import org.junit.runners.Suite;

/** A suite that runs com.example.a.CalcTest again, next to Surefire's own run of it. */
@RunWith(Suite.class)
@Suite.SuiteClasses({com.example.a.CalcTest.class})
public class AllTests {}
